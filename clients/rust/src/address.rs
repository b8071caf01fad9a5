//! Finding the daemon (docs/clients.md): explicit address → `POSTCOMPACT_ADDRESS` →
//! `address` in `D/server.json` → `unix://D/daemon.sock`, where `D` is the runtime directory.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The variable holding an address that overrides server.json and the default socket.
pub const ENV_ADDRESS: &str = "POSTCOMPACT_ADDRESS";
/// The variable holding the TCP bearer token.
pub const ENV_TOKEN: &str = "POSTCOMPACT_TOKEN";
/// The variable naming the daemon executable for auto-start.
pub const ENV_BIN: &str = "POSTCOMPACT_BIN";

/// Where the daemon listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A Unix socket path (`unix:///abs/path`).
    Unix(PathBuf),
    /// A TCP `host:port` (`127.0.0.1:PORT`); calls carry the bearer token.
    Tcp(String),
}

impl Address {
    /// Parses `unix:///abs/path`, `unix:/abs/path`, `unix:rel/path`, a bare absolute path,
    /// `host:port`, `http://host:port` or `tcp://host:port`.
    pub fn parse(s: &str) -> Result<Address, Error> {
        let s = s.trim();
        if s.is_empty() {
            return Err(Error::Config("empty daemon address".into()));
        }
        if let Some(rest) = s.strip_prefix("unix://") {
            if !rest.starts_with('/') {
                return Err(Error::Config(format!(
                    "unix:// address needs an absolute path (unix:///path): {s}"
                )));
            }
            return Ok(Address::Unix(PathBuf::from(rest)));
        }
        if let Some(rest) = s.strip_prefix("unix:") {
            if rest.is_empty() {
                return Err(Error::Config(format!("empty socket path in {s}")));
            }
            return Ok(Address::Unix(PathBuf::from(rest)));
        }
        if s.starts_with('/') {
            return Ok(Address::Unix(PathBuf::from(s)));
        }
        let hostport = s
            .strip_prefix("http://")
            .or_else(|| s.strip_prefix("tcp://"))
            .or_else(|| s.strip_prefix("dns:///"))
            .unwrap_or(s)
            .trim_end_matches('/');
        let (host, port) = hostport.rsplit_once(':').ok_or_else(|| {
            Error::Config(format!(
                "not a daemon address (want unix:///path or host:port): {s}"
            ))
        })?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(Error::Config(format!(
                "not a daemon address (want unix:///path or host:port): {s}"
            )));
        }
        Ok(Address::Tcp(hostport.to_owned()))
    }

    pub fn is_tcp(&self) -> bool {
        matches!(self, Address::Tcp(_))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Unix(p) => write!(f, "unix://{}", p.display()),
            Address::Tcp(hp) => f.write_str(hp),
        }
    }
}

/// Which rule of the resolution order produced the address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSource {
    Explicit,
    Environment,
    ServerJson,
    Default,
}

/// The outcome of address resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub address: Address,
    pub source: AddressSource,
    /// The runtime directory `D` used for server.json, the default socket and the token.
    pub runtime_dir: PathBuf,
    /// `token_file` from server.json, when it named one.
    pub token_file: Option<PathBuf>,
}

/// The process environment, abstracted so resolution can be tested without touching it.
/// `Sync` so that a `&dyn Env` held across an await keeps the client's futures `Send`.
pub trait Env: Sync {
    fn var(&self, name: &str) -> Option<String>;
    fn uid(&self) -> u32;
}

/// The real environment of this process.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn uid(&self) -> u32 {
        // SAFETY: getuid has no preconditions and cannot fail.
        unsafe { libc::getuid() }
    }
}

/// `$XDG_RUNTIME_DIR/postcompact` when `XDG_RUNTIME_DIR` is set to an existing absolute
/// directory (as the daemon checks), otherwise `/tmp/postcompact-<uid>`.
pub fn runtime_dir(env: &dyn Env) -> PathBuf {
    if let Some(xdg) = env.var("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&xdg);
        if p.is_absolute() && p.is_dir() {
            return p.join("postcompact");
        }
    }
    PathBuf::from(format!("/tmp/postcompact-{}", env.uid()))
}

/// The default socket, `D/daemon.sock`.
pub fn default_socket(env: &dyn Env) -> PathBuf {
    runtime_dir(env).join("daemon.sock")
}

/// What a readable server.json says (only the fields the client uses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerJson {
    pub pid: Option<i64>,
    pub address: Option<String>,
    pub socket: Option<String>,
    pub tcp_port: Option<u16>,
    pub token_file: Option<PathBuf>,
}

/// Reads `path`; a missing or unparseable file is `None` (a daemon may be writing it).
pub fn read_server_json(path: &Path) -> Option<ServerJson> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let obj = v.as_object()?;
    let s = |k: &str| obj.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    Some(ServerJson {
        pid: obj.get("pid").and_then(|x| x.as_i64()),
        address: s("address").filter(|a| !a.is_empty()),
        socket: s("socket").filter(|a| !a.is_empty()),
        tcp_port: obj
            .get("tcp_port")
            .and_then(|x| x.as_u64())
            .and_then(|p| u16::try_from(p).ok()),
        token_file: s("token_file").filter(|a| !a.is_empty()).map(PathBuf::from),
    })
}

/// Resolves the daemon address: `explicit`, then `POSTCOMPACT_ADDRESS`, then server.json's
/// `address`, then the default socket.
pub fn resolve(explicit: Option<&str>, env: &dyn Env) -> Result<Resolved, Error> {
    let runtime_dir = runtime_dir(env);
    let server = read_server_json(&runtime_dir.join("server.json"));
    let token_file = server.as_ref().and_then(|s| s.token_file.clone());
    let (address, source) = if let Some(a) = explicit {
        (Address::parse(a)?, AddressSource::Explicit)
    } else if let Some(a) = env.var(ENV_ADDRESS).filter(|a| !a.trim().is_empty()) {
        (Address::parse(&a)?, AddressSource::Environment)
    } else if let Some(a) = server.as_ref().and_then(|s| s.address.as_deref()) {
        (Address::parse(a)?, AddressSource::ServerJson)
    } else {
        (
            Address::Unix(runtime_dir.join("daemon.sock")),
            AddressSource::Default,
        )
    };
    Ok(Resolved {
        address,
        source,
        runtime_dir,
        token_file,
    })
}

/// The TCP bearer token: `POSTCOMPACT_TOKEN`, else server.json's `token_file`, else `D/token`.
/// `Ok(None)` when none of them exists.
pub fn resolve_token(resolved: &Resolved, env: &dyn Env) -> Result<Option<String>, Error> {
    if let Some(t) = env.var(ENV_TOKEN).filter(|t| !t.trim().is_empty()) {
        return Ok(Some(t.trim().to_owned()));
    }
    let candidates = resolved
        .token_file
        .iter()
        .cloned()
        .chain(std::iter::once(resolved.runtime_dir.join("token")));
    for path in candidates {
        match std::fs::read_to_string(&path) {
            Ok(t) if !t.trim().is_empty() => return Ok(Some(t.trim().to_owned())),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Config(format!(
                    "cannot read token file {}: {e}",
                    path.display()
                )))
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<String, String>);

    impl FakeEnv {
        fn new(vars: &[(&str, &str)]) -> Self {
            FakeEnv(
                vars.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        }
    }

    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).cloned()
        }
        fn uid(&self) -> u32 {
            4242
        }
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "pc-rs-addr-{}-{}-{tag}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn parse_forms() {
        assert_eq!(
            Address::parse("unix:///run/pc.sock").unwrap(),
            Address::Unix("/run/pc.sock".into())
        );
        assert_eq!(
            Address::parse("unix:/run/pc.sock").unwrap(),
            Address::Unix("/run/pc.sock".into())
        );
        assert_eq!(
            Address::parse("/run/pc.sock").unwrap(),
            Address::Unix("/run/pc.sock".into())
        );
        assert_eq!(
            Address::parse("127.0.0.1:7000").unwrap(),
            Address::Tcp("127.0.0.1:7000".into())
        );
        assert_eq!(
            Address::parse("http://localhost:7000/").unwrap(),
            Address::Tcp("localhost:7000".into())
        );
        assert_eq!(
            Address::parse("[::1]:7000").unwrap(),
            Address::Tcp("[::1]:7000".into())
        );
        for bad in [
            "",
            "unix://relative",
            "unix:",
            "localhost",
            ":80",
            "h:notaport",
        ] {
            assert!(
                matches!(Address::parse(bad), Err(Error::Config(_))),
                "{bad:?} should not parse"
            );
        }
        assert_eq!(
            Address::parse("unix:///a/b").unwrap().to_string(),
            "unix:///a/b"
        );
        assert!(Address::parse("127.0.0.1:1").unwrap().is_tcp());
    }

    #[test]
    fn runtime_dir_rules() {
        let xdg = tmpdir("xdg");
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", xdg.to_str().unwrap())]);
        assert_eq!(runtime_dir(&env), xdg.join("postcompact"));
        assert_eq!(default_socket(&env), xdg.join("postcompact/daemon.sock"));
        for unusable in ["", "relative/dir", "/nonexistent/pc-rs-xdg"] {
            let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", unusable)]);
            assert_eq!(runtime_dir(&env), PathBuf::from("/tmp/postcompact-4242"));
        }
        assert_eq!(
            runtime_dir(&FakeEnv::new(&[])),
            PathBuf::from("/tmp/postcompact-4242")
        );
    }

    #[test]
    fn resolution_order() {
        let xdg = tmpdir("order");
        let d = xdg.join("postcompact");
        std::fs::create_dir_all(&d).unwrap();
        let x = xdg.to_str().unwrap();

        // 4. nothing: the default socket
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x)]);
        let r = resolve(None, &env).unwrap();
        assert_eq!(r.source, AddressSource::Default);
        assert_eq!(r.address, Address::Unix(d.join("daemon.sock")));
        assert_eq!(r.runtime_dir, d);

        // 3. server.json
        std::fs::write(
            d.join("server.json"),
            r#"{"pid": 12, "address": "unix:///srv/pc.sock", "socket": "/srv/pc.sock",
                "tcp_port": 0, "token_file": null, "api_version": "postcompact.v1"}"#,
        )
        .unwrap();
        let r = resolve(None, &env).unwrap();
        assert_eq!(r.source, AddressSource::ServerJson);
        assert_eq!(r.address, Address::Unix("/srv/pc.sock".into()));
        assert_eq!(r.token_file, None);

        // 2. the environment
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x), (ENV_ADDRESS, "127.0.0.1:9")]);
        let r = resolve(None, &env).unwrap();
        assert_eq!(r.source, AddressSource::Environment);
        assert_eq!(r.address, Address::Tcp("127.0.0.1:9".into()));

        // 1. explicit
        let r = resolve(Some("unix:///x.sock"), &env).unwrap();
        assert_eq!(r.source, AddressSource::Explicit);
        assert_eq!(r.address, Address::Unix("/x.sock".into()));

        // an empty environment variable does not count
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x), (ENV_ADDRESS, "")]);
        assert_eq!(
            resolve(None, &env).unwrap().source,
            AddressSource::ServerJson
        );

        // a bad environment address is an error, not a silent fallback
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x), (ENV_ADDRESS, "nonsense")]);
        assert!(matches!(resolve(None, &env), Err(Error::Config(_))));

        // an unreadable server.json falls through to the default
        std::fs::write(d.join("server.json"), "{not json").unwrap();
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x)]);
        assert_eq!(resolve(None, &env).unwrap().source, AddressSource::Default);
        std::fs::remove_dir_all(&xdg).unwrap();
    }

    #[test]
    fn token_order() {
        let xdg = tmpdir("token");
        let d = xdg.join("postcompact");
        std::fs::create_dir_all(&d).unwrap();
        let x = xdg.to_str().unwrap();
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x)]);

        // none anywhere
        let r = resolve(None, &env).unwrap();
        assert_eq!(resolve_token(&r, &env).unwrap(), None);

        // D/token
        std::fs::write(d.join("token"), "default-token\n").unwrap();
        assert_eq!(
            resolve_token(&r, &env).unwrap().as_deref(),
            Some("default-token")
        );

        // server.json's token_file wins over D/token
        let tf = xdg.join("tcp.token");
        std::fs::write(&tf, "file-token\n").unwrap();
        std::fs::write(
            d.join("server.json"),
            format!(
                r#"{{"address": "127.0.0.1:5", "tcp_port": 5, "token_file": "{}"}}"#,
                tf.display()
            ),
        )
        .unwrap();
        let r = resolve(None, &env).unwrap();
        assert_eq!(r.address, Address::Tcp("127.0.0.1:5".into()));
        assert_eq!(r.token_file.as_deref(), Some(tf.as_path()));
        assert_eq!(
            resolve_token(&r, &env).unwrap().as_deref(),
            Some("file-token")
        );

        // POSTCOMPACT_TOKEN wins over both
        let env = FakeEnv::new(&[("XDG_RUNTIME_DIR", x), (ENV_TOKEN, " env-token ")]);
        assert_eq!(
            resolve_token(&r, &env).unwrap().as_deref(),
            Some("env-token")
        );
        std::fs::remove_dir_all(&xdg).unwrap();
    }

    #[test]
    fn server_json_fields() {
        let d = tmpdir("sj");
        let p = d.join("server.json");
        assert_eq!(read_server_json(&p), None);
        std::fs::write(
            &p,
            r#"{"pid": 7, "version": "0.1.0", "address": "unix:///a.sock", "socket": "/a.sock",
               "tcp_port": 7001, "token_file": "/t", "started_at_ms": 1}"#,
        )
        .unwrap();
        let s = read_server_json(&p).unwrap();
        assert_eq!(s.pid, Some(7));
        assert_eq!(s.address.as_deref(), Some("unix:///a.sock"));
        assert_eq!(s.socket.as_deref(), Some("/a.sock"));
        assert_eq!(s.tcp_port, Some(7001));
        assert_eq!(s.token_file, Some(PathBuf::from("/t")));
        std::fs::write(&p, "[1, 2]").unwrap();
        assert_eq!(read_server_json(&p), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
