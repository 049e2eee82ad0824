use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = swarrow::cli::Cli::parse_from(swarrow::cli::blast_argv(std::env::args_os()));
    swarrow::atomic::install_signal_cleanup();
    match swarrow::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("swarrow: error: {}", e);
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
