//! Writes `kernels/prebuilt/`: every kernel build of `kernels::all()` compiled to a cubin for
//! each architecture of `prebuilt::ARCHS`, and `images.rs`, the table the binary embeds
//! (see `src/engine/cuda/prebuilt.rs`). Run with the NVRTC CI pins:
//!
//!   . scripts/ci-nvrtc.sh env && cargo run --example prebuild_kernels
use std::fmt::Write as _;
use std::path::Path;

use swarrow::engine::cuda::runtime::{self, Arch, Image};
use swarrow::engine::cuda::{kernels, prebuilt};

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/prebuilt");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cubin") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let (major, minor) = runtime::nvrtc_version().expect("NVRTC (see scripts/ci-nvrtc.sh)");
    let mut table =
        format!("// Written by examples/prebuild_kernels.rs with NVRTC {major}.{minor}: do not edit.\n&[\n");
    let mut total = 0;
    for b in kernels::all() {
        let src = b.kernel.source();
        for arch in prebuilt::ARCHS {
            let Image::Cubin(cubin) = runtime::compile(&src, Arch::Real(arch), &b.options).unwrap() else {
                panic!("{}: no cubin", b.name)
            };
            let file = format!("{}.sm_{arch}.cubin", b.name);
            std::fs::write(dir.join(&file), &cubin).unwrap();
            total += cubin.len();
            let key = prebuilt::key(&src, &b.options, arch);
            writeln!(
                table,
                "    Image {{ name: {:?}, arch: {arch}, key: 0x{key:016x}, cubin: include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/kernels/prebuilt/{file}\")) }},",
                b.name
            )
            .unwrap();
        }
    }
    table.push_str("]\n");
    std::fs::write(dir.join("images.rs"), table).unwrap();
    eprintln!("{} images, {} bytes", kernels::all().len() * prebuilt::ARCHS.len(), total);
}
