//! Links the layer with `-z nodelete` on ELF targets: the loader `dlclose`s a
//! layer when the last instance using it is destroyed, and a Rust library
//! cannot run the destructors of its statics (the logging subscriber, the
//! handle registries, rspirv's grammar tables), so every instance lifetime
//! used to lose about 210 KB. Kept loaded, the statics are made once per
//! process and reused by later instances. (It also keeps thread-local
//! destructors registered by the layer valid until the threads exit.)

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(os.as_str(), "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
