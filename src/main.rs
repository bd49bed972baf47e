fn main() {
    std::process::exit(agentic_sdlc::cli::main().code());
}
