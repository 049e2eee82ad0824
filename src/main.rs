use std::process::ExitCode;

/// Which standard descriptors the caller closed, noted before Rust's runtime fills them with
/// `/dev/null` (`swarrow::stdio`).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDIO: extern "C" fn() = swarrow::stdio::note_closed;
#[cfg(target_os = "macos")]
#[used]
#[link_section = "__DATA,__mod_init_func"]
static NOTE_CLOSED_STDIO: extern "C" fn() = swarrow::stdio::note_closed;

fn main() -> ExitCode {
    // The global pool (the readers' parallel parsing) named as swarrow's other threads
    // (src/threads.rs); it exists already only if something built it first.
    let _ = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("sw-pool-{i}")).build_global();
    ExitCode::from(swarrow::cli::main_with(std::env::args_os()))
}
