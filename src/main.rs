use std::process::ExitCode;

fn main() -> ExitCode {
    // The global pool (the readers' parallel parsing) named as swarrow's other threads
    // (src/threads.rs); it exists already only if something built it first.
    let _ = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("sw-pool-{i}")).build_global();
    ExitCode::from(swarrow::cli::main_with(std::env::args_os()))
}
