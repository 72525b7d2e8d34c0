//! The `nrt` command: inspect, unpack and pack NEFFs, assemble and
//! disassemble engine programs.
//!
//! Every verb prints its result on stdout; a failure prints one line
//! `nrt: error: ...` on stderr naming what was wrong, and exits non-zero.

mod asm_cmd;
mod inspect;
mod neff_cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Command-line interface of nrt-rs.
#[derive(Parser)]
#[command(name = "nrt", version, about = "nrt-rs: the Neuron runtime, with a simulated NeuronCore")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Work with NEFF files: inspect, unpack, pack.
    Neff {
        #[command(subcommand)]
        command: NeffCommand,
    },
    /// Assemble a text engine program into 64-byte instruction records.
    Asm {
        /// The program text.
        input: PathBuf,
        /// Where to write the records.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Disassemble an engine instruction stream (a `.bin` of 64-byte records).
    Disasm {
        /// The instruction stream.
        input: PathBuf,
    },
}

#[derive(Subcommand)]
enum NeffCommand {
    /// Show a NEFF's header, subgraphs, vars, queue sets, I/O tensors and programs.
    Inspect {
        /// The NEFF file.
        file: PathBuf,
        /// Print one JSON object instead of tables.
        #[arg(long)]
        json: bool,
        /// Check the payload digest against the header.
        #[arg(long)]
        verify_hash: bool,
    },
    /// Extract every member of a NEFF (and its header as neff-header.json) into DIR.
    Unpack {
        /// The NEFF file.
        file: PathBuf,
        /// The directory to create or fill.
        dir: PathBuf,
    },
    /// Pack DIR into a NEFF; `*.asm` programs are assembled into `.bin` members of the same stem.
    Pack {
        /// The directory (as written by `unpack`, or hand-made).
        dir: PathBuf,
        /// The NEFF file to write.
        file: PathBuf,
        /// Model name stored in the header.
        #[arg(long)]
        name: Option<String>,
        /// Payload digest: sha256 (plain tar, pkg_version 1) or md5 (gzip tar, pkg_version 2).
        #[arg(long, value_parser = ["sha256", "md5"])]
        hash: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Neff { command } => match command {
            NeffCommand::Inspect { file, json, verify_hash } => inspect::run(&file, json, verify_hash),
            NeffCommand::Unpack { file, dir } => neff_cmd::unpack(&file, &dir),
            NeffCommand::Pack { dir, file, name, hash } => neff_cmd::pack(&dir, &file, name, hash.as_deref()),
        },
        Command::Asm { input, output } => asm_cmd::assemble(&input, &output),
        Command::Disasm { input } => asm_cmd::disassemble(&input),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line: the context chain joined, so scripts can grep it.
            let msg = format!("{err:#}").replace('\n', " ");
            eprintln!("nrt: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
