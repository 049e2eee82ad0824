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
fn search_kernels_all_exported() {
    if !nvrtc_or_skip() {
        return;
    }
    let src = swarrow::engine::cuda::search::SEARCH_SOURCE;
    let Image::Ptx(ptx) = runtime::compile(&src, Arch::Virtual(90), &[]).expect("sw_search.cu compiles") else {
        panic!("expected PTX")
    };
    for v in swarrow::engine::cuda::layout::VARIANTS {
        assert!(ptx.contains(&v.kernel_name()), "missing kernel {}", v.kernel_name());
    }
    for k in ["topk_hist", "topk_threshold", "topk_select"] {
        assert!(ptx.contains(k), "missing kernel {}", k);
    }
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
fn every_align_variant_compiles() {
    if !nvrtc_or_skip() {
        return;
    }
    use swarrow::engine::cuda::{
        align::KERNEL_SOURCE,
        align_plan::{PACKED_ROWS, WIDE_ROWS},
    };
    let src = Source { name: "align.cu", text: KERNEL_SOURCE, headers: &[] };
    let variants = PACKED_ROWS.iter().map(|&r| (true, r)).chain([(false, WIDE_ROWS)]);
    for (packed, rows) in variants {
        let opts = vec![format!("-DROWS={}", rows), format!("-DPACKED={}", packed as i32)];
        match runtime::compile(&src, Arch::Virtual(90), &opts) {
            Ok(Image::Ptx(ptx)) => assert!(ptx.contains("align_pairs"), "rows {} packed {}: no entry", rows, packed),
            Ok(Image::Cubin(_)) => panic!("expected PTX"),
            Err(e) => panic!("align.cu rows {} packed {}: {}", rows, packed, e),
        }
    }
}

#[test]
fn pairhmm_kernel_compiles_in_float_and_double() {
    if !nvrtc_or_skip() {
        return;
    }
    let src = Source { name: "pairhmm.cu", text: swarrow::pairhmm::cuda::KERNEL_SOURCE, headers: &[] };
    for arch in [Arch::Virtual(80), Arch::Virtual(90)] {
        for double in [0, 1] {
            let opts = vec![format!("-DPAIRHMM_DOUBLE={double}")];
            match runtime::compile(&src, arch, &opts) {
                Ok(Image::Ptx(ptx)) => {
                    assert!(ptx.contains("pairhmm_forward"), "{arch:?} double={double}: no entry");
                    // The double build computes in double: f64 arithmetic in the PTX.
                    assert_eq!(
                        ptx.contains("fma.rn.f64") || ptx.contains("mul.rn.f64"),
                        double == 1,
                        "{arch:?} double={double}"
                    );
                }
                Ok(Image::Cubin(_)) => panic!("expected PTX"),
                Err(e) => panic!("pairhmm.cu {arch:?} double={double}: {e}"),
            }
        }
    }
}
