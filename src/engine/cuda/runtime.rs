//! The CUDA runtime layer every GPU engine shares: probing for the driver and NVRTC without
//! panicking, opening devices, compiling `kernels/*.cu` with NVRTC (cubin for the detected
//! GPU, PTX as a fallback) through an on-disk cache, and turning every CUDA failure into
//! `Error::Device`.
//!
//! cudarc loads libcuda and libnvrtc lazily and panics when they are missing, so nothing in
//! here touches either library before `driver_present()` / `nvrtc_present()` said yes.

use crate::error::{Error, Result};
use cudarc::driver::{sys as dsys, CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::{sys as nsys, Ptx};
use std::ffi::{c_char, c_int, CStr, CString};
use std::fmt::Display;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Wraps any CUDA-side failure as `Error::Device` with what was being done.
pub fn dev_err<E: Display>(what: impl Display) -> impl FnOnce(E) -> Error {
    move |e| Error::Device(format!("CUDA: {}: {}", what, e))
}

/// Runs a probe that may panic inside cudarc (missing library or symbol) and reads a
/// panic as "no".
fn probe(f: impl FnOnce() -> bool + std::panic::UnwindSafe) -> bool {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(f).unwrap_or(false);
    std::panic::set_hook(hook);
    r
}

/// The CUDA driver library (libcuda) can be loaded.
pub fn driver_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    *P.get_or_init(|| probe(|| unsafe { dsys::is_culib_present() }))
}

/// The NVRTC library can be loaded and answers a version query.
pub fn nvrtc_present() -> bool {
    static P: OnceLock<bool> = OnceLock::new();
    *P.get_or_init(|| probe(|| unsafe { nsys::is_culib_present() } && nvrtc_version().is_ok()))
}

/// Number of CUDA devices, initialising the driver; Error::Device when there is no driver.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::Device("CUDA driver library (libcuda) not found".into()));
    }
    cudarc::driver::result::init().map_err(dev_err("cuInit"))?;
    let n = cudarc::driver::result::device::get_count().map_err(dev_err("cuDeviceGetCount"))?;
    Ok(n.max(0) as usize)
}

/// Whether a GPU search can run here: driver and NVRTC load and at least one device exists.
pub fn available() -> bool {
    static A: OnceLock<bool> = OnceLock::new();
    *A.get_or_init(|| driver_present() && nvrtc_present() && probe(|| matches!(device_count(), Ok(n) if n > 0)))
}

/// Why `available()` is false, for `Error::Device` messages; None when it is true.
pub fn unavailable_reason() -> Option<String> {
    if !driver_present() {
        return Some("no CUDA driver: libcuda could not be loaded".into());
    }
    if !nvrtc_present() {
        return Some(
            "NVRTC (libnvrtc.so.13) could not be loaded: install the CUDA 13 runtime compiler \
             or put its directory on LD_LIBRARY_PATH"
                .into(),
        );
    }
    match device_count() {
        Ok(0) => Some("the CUDA driver reports no GPU".into()),
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

fn nvrtc_check(r: nsys::nvrtcResult, what: &str) -> Result<()> {
    if r == nsys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    let msg = unsafe {
        let p = nsys::nvrtcGetErrorString(r);
        if p.is_null() {
            format!("{:?}", r)
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    Err(Error::Device(format!("NVRTC: {}: {}", what, msg)))
}

/// NVRTC's (major, minor) version. Call only after `nvrtc_present()` (or inside `probe`).
pub fn nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    nvrtc_check(unsafe { nsys::nvrtcVersion(&mut major, &mut minor) }, "nvrtcVersion")?;
    Ok((major, minor))
}

/// Architectures this NVRTC can compile for, as major*10+minor (e.g. 90).
pub fn nvrtc_archs() -> Result<Vec<u32>> {
    require_nvrtc()?;
    let mut n: c_int = 0;
    nvrtc_check(unsafe { nsys::nvrtcGetNumSupportedArchs(&mut n) }, "nvrtcGetNumSupportedArchs")?;
    let mut v = vec![0 as c_int; n.max(0) as usize];
    nvrtc_check(unsafe { nsys::nvrtcGetSupportedArchs(v.as_mut_ptr()) }, "nvrtcGetSupportedArchs")?;
    Ok(v.into_iter().map(|a| a as u32).collect())
}

fn require_nvrtc() -> Result<()> {
    if nvrtc_present() {
        Ok(())
    } else {
        Err(Error::Device("NVRTC (libnvrtc) could not be loaded".into()))
    }
}

/// A compilation target: `Real(90)` is `sm_90` (a cubin), `Virtual(90)` is `compute_90` (PTX).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    Real(u32),
    Virtual(u32),
}

impl Arch {
    fn flag(self) -> String {
        match self {
            Arch::Real(a) => format!("--gpu-architecture=sm_{}", a),
            Arch::Virtual(a) => format!("--gpu-architecture=compute_{}", a),
        }
    }

    fn tag(self) -> String {
        match self {
            Arch::Real(a) => format!("sm_{}", a),
            Arch::Virtual(a) => format!("compute_{}", a),
        }
    }
}

/// Compiled device code ready for `cuModuleLoadData`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    Cubin(Vec<u8>),
    Ptx(String),
}

impl Image {
    fn into_ptx(self) -> Ptx {
        match self {
            Image::Cubin(b) => Ptx::from_binary(b),
            Image::Ptx(s) => Ptx::from_src(s),
        }
    }
}

/// One CUDA C++ source to compile: its file name (for messages and `#line`), its text, and
/// the headers it may `#include "..."` (NVRTC has no file system access or standard headers).
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
}

struct Program(nsys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        unsafe {
            nsys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Internal(format!("{} contains a NUL byte", what)))
}

fn program_log(prog: &Program) -> String {
    let mut size = 0usize;
    unsafe {
        if nsys::nvrtcGetProgramLogSize(prog.0, &mut size) != nsys::nvrtcResult::NVRTC_SUCCESS || size <= 1 {
            return String::new();
        }
        let mut buf = vec![0 as c_char; size];
        if nsys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr()) != nsys::nvrtcResult::NVRTC_SUCCESS {
            return String::new();
        }
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().trim_end().to_string()
    }
}

/// Compiles `src` for `arch` with NVRTC (no cache). `options` are extra NVRTC flags
/// (e.g. `-DTILE=16`). A compile failure is `Error::Device` carrying NVRTC's log.
pub fn compile(src: &Source, arch: Arch, options: &[String]) -> Result<Image> {
    require_nvrtc()?;
    let text = cstring(src.text, src.name)?;
    let name = cstring(src.name, "kernel name")?;
    let hdr_text: Vec<CString> = src.headers.iter().map(|(_, t)| cstring(t, "header")).collect::<Result<_>>()?;
    let hdr_name: Vec<CString> = src.headers.iter().map(|(n, _)| cstring(n, "header name")).collect::<Result<_>>()?;
    let hdr_text_p: Vec<*const c_char> = hdr_text.iter().map(|c| c.as_ptr()).collect();
    let hdr_name_p: Vec<*const c_char> = hdr_name.iter().map(|c| c.as_ptr()).collect();
    let mut raw: nsys::nvrtcProgram = std::ptr::null_mut();
    nvrtc_check(
        unsafe {
            nsys::nvrtcCreateProgram(
                &mut raw,
                text.as_ptr(),
                name.as_ptr(),
                hdr_text_p.len() as c_int,
                if hdr_text_p.is_empty() { std::ptr::null() } else { hdr_text_p.as_ptr() },
                if hdr_name_p.is_empty() { std::ptr::null() } else { hdr_name_p.as_ptr() },
            )
        },
        "nvrtcCreateProgram",
    )?;
    let prog = Program(raw);
    let mut flags: Vec<String> = vec![arch.flag(), "--std=c++17".into(), "-default-device".into()];
    flags.extend(options.iter().cloned());
    let cflags: Vec<CString> = flags.iter().map(|f| cstring(f, "option")).collect::<Result<_>>()?;
    let cflag_p: Vec<*const c_char> = cflags.iter().map(|c| c.as_ptr()).collect();
    let r = unsafe { nsys::nvrtcCompileProgram(prog.0, cflag_p.len() as c_int, cflag_p.as_ptr()) };
    if r != nsys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Device(format!(
            "NVRTC could not compile {} for {} ({}):\n{}",
            src.name,
            arch.tag(),
            flags.join(" "),
            program_log(&prog)
        )));
    }
    match arch {
        Arch::Real(_) => {
            let mut size = 0usize;
            nvrtc_check(unsafe { nsys::nvrtcGetCUBINSize(prog.0, &mut size) }, "nvrtcGetCUBINSize")?;
            let mut buf = vec![0u8; size];
            nvrtc_check(unsafe { nsys::nvrtcGetCUBIN(prog.0, buf.as_mut_ptr() as *mut c_char) }, "nvrtcGetCUBIN")?;
            Ok(Image::Cubin(buf))
        }
        Arch::Virtual(_) => {
            let mut size = 0usize;
            nvrtc_check(unsafe { nsys::nvrtcGetPTXSize(prog.0, &mut size) }, "nvrtcGetPTXSize")?;
            let mut buf = vec![0 as c_char; size.max(1)];
            nvrtc_check(unsafe { nsys::nvrtcGetPTX(prog.0, buf.as_mut_ptr()) }, "nvrtcGetPTX")?;
            Ok(Image::Ptx(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()))
        }
    }
}

/// FNV-1a: a stable hash for cache keys (std's hasher may change between Rust releases).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for &b in p.iter().chain(&[0xffu8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// The key of `src` compiled with `options` for the target `tag` names: its text, headers,
/// options and the tag (the disk cache's and the shipped images' one rule).
pub(crate) fn source_key(src: &Source, options: &[String], tag: &str) -> u64 {
    let mut parts: Vec<&[u8]> = vec![src.text.as_bytes()];
    for (n, t) in src.headers {
        parts.push(n.as_bytes());
        parts.push(t.as_bytes());
    }
    for o in options {
        parts.push(o.as_bytes());
    }
    parts.push(tag.as_bytes());
    fnv1a(&parts)
}

/// Where compiled kernels are cached: $SWARROW_CACHE_DIR, else $XDG_CACHE_HOME/swarrow,
/// else ~/.cache/swarrow. None when none of these is set.
pub fn cache_dir() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    nonempty("SWARROW_CACHE_DIR")
        .or_else(|| nonempty("XDG_CACHE_HOME").map(|p| p.join("swarrow")))
        .or_else(|| nonempty("HOME").map(|p| p.join(".cache").join("swarrow")))
}

/// `compile` through the disk cache, keyed by source text, headers, options, arch and the
/// NVRTC version. Cache read or write failures only cost a recompile.
pub fn compile_cached(src: &Source, arch: Arch, options: &[String]) -> Result<Image> {
    let (major, minor) = nvrtc_version()?;
    let key = source_key(src, options, &format!("{} nvrtc {}.{}", arch.tag(), major, minor));
    let stem: String = src.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let ext = match arch {
        Arch::Real(_) => "cubin",
        Arch::Virtual(_) => "ptx",
    };
    let path = cache_dir().map(|d| d.join(format!("{}-{}-{:016x}.{}", stem, arch.tag(), key, ext)));
    if let Some(p) = &path {
        if let Ok(bytes) = std::fs::read(p) {
            if !bytes.is_empty() {
                return Ok(match arch {
                    Arch::Real(_) => Image::Cubin(bytes),
                    Arch::Virtual(_) => Image::Ptx(String::from_utf8_lossy(&bytes).into_owned()),
                });
            }
        }
    }
    let image = compile(src, arch, options)?;
    if let Some(p) = &path {
        let bytes: &[u8] = match &image {
            Image::Cubin(b) => b,
            Image::Ptx(s) => s.as_bytes(),
        };
        // Write then rename, so a concurrent reader never sees half a file.
        // (Unique per process and call: several GPUs compile in parallel threads.)
        static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = p.with_extension(format!("{}.{}.{}", ext, std::process::id(), n));
        let ok = p.parent().map(|d| std::fs::create_dir_all(d).is_ok()).unwrap_or(false)
            && std::fs::write(&tmp, bytes).is_ok()
            && std::fs::rename(&tmp, p).is_ok();
        if !ok {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(image)
}

/// One opened GPU: its context, a stream for work, and what the engines size launches by.
pub struct Gpu {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability as major*10+minor (90 for H100).
    pub arch: u32,
    pub sms: u32,
    /// Largest dynamic shared memory a block may opt into, bytes.
    pub max_shared_optin: u32,
    pub total_mem: usize,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
}

impl Gpu {
    /// Opens device `ordinal`; Error::Device (with the reason) when CUDA is unusable here.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        if let Some(why) = unavailable_reason() {
            return Err(Error::Device(why));
        }
        let ctx = CudaContext::new(ordinal).map_err(dev_err(format!("opening GPU {}", ordinal)))?;
        let name = ctx.name().map_err(dev_err("device name"))?;
        let (major, minor) = ctx.compute_capability().map_err(dev_err("compute capability"))?;
        let attr = |a| ctx.attribute(a).map_err(dev_err("device attribute"));
        let sms = attr(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let max_shared_optin =
            attr(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32;
        let total_mem = ctx.total_mem().map_err(dev_err("device memory size"))?;
        let stream = ctx.new_stream().map_err(dev_err("creating a stream"))?;
        Ok(Gpu { ordinal, name, arch: (major * 10 + minor) as u32, sms, max_shared_optin, total_mem, ctx, stream })
    }

    /// All visible GPUs.
    pub fn open_all() -> Result<Vec<Gpu>> {
        let n = device_count()?;
        if n == 0 {
            return Err(Error::Device("the CUDA driver reports no GPU".into()));
        }
        (0..n).map(Gpu::open).collect()
    }

    /// The target to compile for on this GPU: its own `sm_XY` when NVRTC knows it, else PTX
    /// for the newest architecture NVRTC knows that is not newer than the GPU (the driver
    /// finishes compiling it).
    pub fn target(&self) -> Result<Arch> {
        let archs = nvrtc_archs()?;
        if archs.contains(&self.arch) {
            return Ok(Arch::Real(self.arch));
        }
        archs
            .iter()
            .copied()
            .filter(|&a| a <= self.arch)
            .max()
            .map(Arch::Virtual)
            .ok_or_else(|| Error::Device(format!("NVRTC cannot compile for {} (sm_{})", self.name, self.arch)))
    }

    /// Loads `src` for this GPU: its committed image where there is one
    /// ([`super::prebuilt`]), else compiled (through the cache); when the cubin will not
    /// load, retries once with PTX.
    pub fn load(&self, src: &Source, options: &[String]) -> Result<Arc<CudaModule>> {
        if let Some(cubin) = super::prebuilt::find(src, options, self.arch) {
            if let Ok(m) = self.ctx.load_module(Ptx::from_binary(cubin.to_vec())) {
                return Ok(m);
            }
        }
        let target = self.target()?;
        let image = compile_cached(src, target, options)?;
        match self.ctx.load_module(image.into_ptx()) {
            Ok(m) => Ok(m),
            Err(first) => {
                let arch = match target {
                    Arch::Real(a) | Arch::Virtual(a) => a,
                };
                let ptx = compile_cached(src, Arch::Virtual(arch), options)?;
                self.ctx.load_module(ptx.into_ptx()).map_err(|e| {
                    Error::Device(format!("CUDA: loading {} on {}: cubin: {}; PTX: {}", src.name, self.name, first, e))
                })
            }
        }
    }

    /// A kernel of a loaded module.
    pub fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction> {
        module.load_function(name).map_err(dev_err(format!("kernel {}", name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_key_changes_with_every_part() {
        let base = fnv1a(&[b"src", b"sm_90"]);
        assert_ne!(base, fnv1a(&[b"src", b"sm_80"]));
        assert_ne!(base, fnv1a(&[b"srd", b"sm_90"]));
        // Part boundaries count: ("ab","c") differs from ("a","bc").
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
    }

    #[test]
    fn probes_never_panic_without_cuda() {
        // On a machine without CUDA these must answer false instead of panicking; with CUDA
        // they must agree with each other.
        let a = available();
        if a {
            assert!(driver_present() && nvrtc_present());
            assert!(unavailable_reason().is_none());
        } else {
            assert!(unavailable_reason().is_some());
        }
    }
}
