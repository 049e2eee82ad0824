//! Every CUDA kernel source in kernels/ must compile with NVRTC for compute_80 and
//! compute_90. CI has no GPU, only NVRTC (scripts/ci-nvrtc.sh installs the pinned wheel):
//! there, CI=true makes a missing NVRTC a failure. Elsewhere the test is skipped loudly.

use swarrow::engine::cuda::runtime::{self, Arch, Image, Source};

fn kernel_files() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("kernels/ directory")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    files
}

/// Headers a kernel may include: every kernels/*.cuh, by file name.
fn headers() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    std::fs::read_dir(&dir)
        .expect("kernels/ directory")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cuh"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

fn nvrtc_or_skip() -> bool {
    if runtime::nvrtc_present() {
        return true;
    }
    let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
    if ci {
        panic!(
            "CI=true but NVRTC (libnvrtc.so.13) cannot be loaded: run scripts/ci-nvrtc.sh, which \
             installs nvidia-cuda-nvrtc==13.0.88 and exports LD_LIBRARY_PATH"
        );
    }
    eprintln!("\n*** SKIPPED kernels_compile: NVRTC not found (set LD_LIBRARY_PATH, see scripts/ci-nvrtc.sh) ***\n");
    false
}

#[test]
fn every_kernel_compiles_for_compute_80_and_90() {
    if !nvrtc_or_skip() {
        return;
    }
    let files = kernel_files();
    assert!(!files.is_empty(), "no kernels/*.cu found");
    let hdrs = headers();
    let hdr_refs: Vec<(&str, &str)> = hdrs.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut failures = Vec::new();
    for (name, text) in &files {
        let src = Source { name, text, headers: &hdr_refs };
        for arch in [Arch::Virtual(80), Arch::Virtual(90)] {
            match runtime::compile(&src, arch, &[]) {
                Ok(Image::Ptx(ptx)) => {
                    assert!(ptx.contains(".entry"), "{} for {:?}: PTX has no kernel entry", name, arch)
                }
                Ok(Image::Cubin(_)) => panic!("{} for {:?}: expected PTX for a virtual architecture", name, arch),
                Err(e) => failures.push(format!("{} for {:?}: {}", name, arch, e)),
            }
        }
    }
    assert!(failures.is_empty(), "kernel compile failures:\n{}", failures.join("\n\n"));
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    if !nvrtc_or_skip() {
        return;
    }
    let src =
        Source { name: "broken.cu", text: "extern \"C\" __global__ void k() { undeclared_thing(); }", headers: &[] };
    let e = runtime::compile(&src, Arch::Virtual(90), &[]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("broken.cu") && msg.contains("undeclared_thing"), "{}", msg);
}

#[test]
fn every_registered_variant_compiles_with_its_entry_points() {
    if !nvrtc_or_skip() {
        return;
    }
    use swarrow::engine::cuda::kernels::{self, Kernel};
    let builds = kernels::all();
    // Every kernel source is registered (one registry for the host and this test).
    let registered: Vec<&str> = builds.iter().map(|b| b.kernel.source().name).collect();
    for (file, _) in kernel_files() {
        assert!(registered.contains(&file.as_str()), "kernels/{file} is not in engine::cuda::kernels");
    }
    let mut failures = Vec::new();
    for b in &builds {
        for arch in [Arch::Virtual(80), Arch::Virtual(90)] {
            match runtime::compile(&b.kernel.source(), arch, &b.options) {
                Ok(Image::Ptx(ptx)) => {
                    let mut entries = vec![b.kernel.entry()];
                    if b.kernel == Kernel::Search {
                        entries.extend(kernels::TOPK_ENTRIES);
                    }
                    for e in entries {
                        assert!(ptx.contains(&format!(".entry {e}(")), "{} {arch:?}: no entry {e}", b.name);
                    }
                    if b.kernel == Kernel::PairHmm {
                        // The double build computes in double: f64 arithmetic in the PTX.
                        let double = b.options.iter().any(|o| o == "-DPAIRHMM_DOUBLE=1");
                        assert_eq!(ptx.contains("fma.rn.f64") || ptx.contains("mul.rn.f64"), double, "{}", b.name);
                    }
                }
                Ok(Image::Cubin(_)) => panic!("{}: expected PTX", b.name),
                Err(e) => failures.push(format!("{} for {arch:?}: {e}", b.name)),
            }
        }
    }
    assert!(failures.is_empty(), "kernel compile failures:\n{}", failures.join("\n\n"));
}

/// The images a fresh machine loads (`kernels/prebuilt/`, embedded in the binary) are what
/// the registered builds compile to with CI's NVRTC, byte for byte: a kernel edited without
/// `cargo run --example prebuild_kernels` fails here (and would compile at run time).
#[test]
fn committed_images_are_what_the_sources_compile_to() {
    if !nvrtc_or_skip() {
        return;
    }
    use swarrow::engine::cuda::{kernels, prebuilt};
    let mut stale = Vec::new();
    for b in kernels::all() {
        for arch in prebuilt::ARCHS {
            let committed = prebuilt::find(&b.kernel.source(), &b.options, arch);
            let built = match runtime::compile(&b.kernel.source(), Arch::Real(arch), &b.options) {
                Ok(Image::Cubin(c)) => c,
                other => panic!("{} sm_{arch}: expected a cubin, got {other:?}", b.name),
            };
            if committed != Some(built.as_slice()) {
                stale.push(format!("{} sm_{arch}", b.name));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "kernels/prebuilt differs from the sources (run `. scripts/ci-nvrtc.sh env && cargo run --example \
         prebuild_kernels`): {stale:?}"
    );
}
