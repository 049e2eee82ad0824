//! Kernels compiled ahead of time, so that a fresh machine (a workflow task in a new
//! container, an empty kernel cache) starts as fast as a warm one: every build of
//! [`kernels::all`] as a cubin for each architecture of [`ARCHS`], made by
//! `cargo run --example prebuild_kernels` with the NVRTC that CI pins
//! (`scripts/ci-nvrtc.sh`) and committed under `kernels/prebuilt/`. Each image is keyed by
//! its source text, options and architecture, so an edited kernel, a tuning option or a
//! `SWARROW_KERNEL_DIR` override misses and compiles through NVRTC as before;
//! `tests/kernels_compile.rs` fails when a committed image is not what the sources compile to.
//! Other GPU generations compile at run time (cached on disk).

use super::runtime::{source_key, Source};

/// The architectures images are committed for: sm_80 (A100) and sm_90 (H100, H200).
pub const ARCHS: [u32; 2] = [80, 90];

/// One committed image: the build's name, its architecture, its key and the cubin.
pub struct Image {
    pub name: &'static str,
    pub arch: u32,
    pub key: u64,
    pub cubin: &'static [u8],
}

/// The committed images (written by `examples/prebuild_kernels.rs`).
pub const IMAGES: &[Image] = include!("../../../kernels/prebuilt/images.rs");

/// The key of `src` compiled with `options` for `sm_<arch>`.
pub fn key(src: &Source, options: &[String], arch: u32) -> u64 {
    source_key(src, options, &format!("prebuilt sm_{arch}"))
}

/// The committed cubin of `src` with `options` for `sm_<arch>`, if there is one.
pub fn find(src: &Source, options: &[String], arch: u32) -> Option<&'static [u8]> {
    if !ARCHS.contains(&arch) {
        return None;
    }
    let key = key(src, options, arch);
    IMAGES.iter().find(|i| i.arch == arch && i.key == key).map(|i| i.cubin)
}

#[cfg(test)]
mod tests {
    use super::super::kernels;
    use super::*;

    /// What a fresh machine with an sm_80 or sm_90 GPU loads: every build the engines may
    /// load has its committed image, so none compiles on the user's clock.
    #[test]
    fn every_build_has_an_image_for_every_arch() {
        let mut missing = Vec::new();
        for b in kernels::all() {
            for arch in ARCHS {
                if find(&b.kernel.source(), &b.options, arch).is_none() {
                    missing.push(format!("{} sm_{arch}", b.name));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "no committed image (kernel sources changed? run `cargo run --example prebuild_kernels` with \
             scripts/ci-nvrtc.sh's NVRTC): {missing:?}"
        );
        assert_eq!(IMAGES.len(), kernels::all().len() * ARCHS.len(), "stale images in kernels/prebuilt");
    }
}
