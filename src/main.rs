use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(swarrow::cli::main_with(std::env::args_os()))
}
