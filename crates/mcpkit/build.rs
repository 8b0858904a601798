//! Links the `mcpkit` binary's start-up code together.
//!
//! The functions a gateway or a server runs from start to idle, and those its calls run (with
//! traces and metrics on too), are listed in `link/symbol-order.txt` (made by
//! `scripts/symbol-order.sh`; the request path hottest first); the linker is asked to place
//! them first and next to each other. The kernel maps a binary's code some 64 KiB around each
//! page that faults, so start-up code scattered over 18 MiB maps most of it; packed together it
//! maps a few MiB (docs/PERFORMANCE.md, "Idle memory"). The list only orders code: a name it
//! holds that the build does not have (a dependency updated, a function renamed) is skipped,
//! and nothing else changes.
//!
//! Also packs the binary's relative relocations, when the C library can read them (below).
//!
//! Only for release builds on x86_64 Linux with the LLD that rustc uses by default there
//! (1.90 and later), and not when the build chooses its own linker; `MCPKIT_NO_SYMBOL_ORDER=1`
//! turns it off.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link/symbol-order.txt");
    println!("cargo:rerun-if-env-changed=MCPKIT_NO_SYMBOL_ORDER");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let wanted = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("MCPKIT_NO_SYMBOL_ORDER").is_empty()
        && var("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_empty()
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link")
        && rustc_links_with_lld();
    if !wanted {
        return;
    }
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link/symbol-order.txt");
    if !order.is_file() {
        return;
    }
    println!("cargo:rustc-link-arg-bin=mcpkit=-Wl,--symbol-ordering-file={}", order.display());
    println!("cargo:rustc-link-arg-bin=mcpkit=-Wl,--no-warn-symbol-ordering");
    // Relative relocations packed (DT_RELR): the loader reads a few KiB at start instead of the
    // 0.8 MB of `.rela.dyn` a position-independent binary of this size has. The C library
    // applies them from 2.36 on; a binary so linked does not start with an older one, so only
    // when the one it is built against is new enough (a native build: host and target agree).
    if var("HOST") == var("TARGET") && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=mcpkit=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's GNU C library is `major.minor` or later.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else { return false };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else { return false };
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().unwrap_or(0));
    let found = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    found >= (major, minor)
}

/// Whether rustc is 1.90 or later, whose x86_64 Linux builds link with its own LLD.
fn rustc_links_with_lld() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else { return false };
    let version = String::from_utf8_lossy(&out.stdout);
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let mut numbers = version.split_whitespace().nth(1).unwrap_or("").split('.');
    let major: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let minor: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    major > 1 || (major == 1 && minor >= 90)
}
