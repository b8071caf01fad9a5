//! What printing (`{:?}`, `{:#?}`) shows of the client's objects: never the TCP token, nor
//! anything of the environment (docs/clients.md, "Printing a client"). [`crate::Client`] shows its
//! address only (client.rs); a [`crate::Session`] its client, ids and the daemon's description.

use std::fmt;

use crate::client::{BearerToken, Options};

/// Stands for a secret that is set.
struct Hidden;

impl fmt::Debug for Hidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("address", &self.address)
            .field("auto_start", &self.auto_start)
            .field("daemon_bin", &self.daemon_bin)
            .field("token", &self.token.as_ref().map(|_| Hidden))
            .field("start_timeout", &self.start_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let token = if self.is_set() { Some(Hidden) } else { None };
        f.debug_tuple("BearerToken").field(&token).finish()
    }
}
