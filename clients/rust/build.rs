//! Generates the gRPC client code from the repository's proto at build time with protox (a
//! pure-Rust protobuf compiler: no protoc binary needed). Nothing generated is committed.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let repo_protos = manifest.join("../../proto");
    let local_protos = manifest.join("proto");
    let files = [
        repo_protos.join("postcompact/v1/postcompact.proto"),
        local_protos.join("grpc/health/v1/health.proto"),
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&repo_protos, &local_protos])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_fds(fds)?;
    Ok(())
}
