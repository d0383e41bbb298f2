//! [`AccessFile`]: how a worker finds and proves itself to a run's coordinator.
//!
//! The coordinator writes it into the run directory; workers are pointed at
//! it with `--access FILE`, so neither the address nor the secret ever
//! appears on a command line (visible to every user in `ps`). The file is
//! JSON, readable by its owner only (mode `0600`), and replaced atomically so
//! a worker never reads half of it (`RunDir::write_access`):
//!
//! ```json
//! {"address": "node17:40123", "secret": "<64 hex digits>", "run_id": "20240501-1"}
//! ```

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::net::{NetError, Secret};

/// Permissions of the access file: read and write for its owner only.
pub const ACCESS_FILE_MODE: u32 = 0o600;

/// The contents of a run's access file; it is written by
/// `RunDir::write_access`, serialized as the on-disk shape.
#[derive(Clone, Debug, Serialize)]
#[serde(into = "Wire")]
pub struct AccessFile {
    /// The `host:port` a worker dials to reach the coordinator.
    pub address: String,
    /// The run's secret; a peer without it is refused.
    pub secret: Secret,
    /// The run this file belongs to, so a worker can tell which run it joined.
    pub run_id: String,
}

/// The on-disk shape: the secret as hex.
#[derive(Serialize, Deserialize)]
struct Wire {
    address: String,
    secret: String,
    run_id: String,
}

impl From<AccessFile> for Wire {
    fn from(access: AccessFile) -> Self {
        Wire { address: access.address, secret: access.secret.to_hex(), run_id: access.run_id }
    }
}

impl AccessFile {
    /// Reads the file at `path`.
    pub fn read(path: &Path) -> Result<Self, NetError> {
        let text = match fs_err::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(NetError::AccessMissing { path: path.to_owned() });
            }
            Err(e) => return Err(access_io(path, e)),
        };
        let wire: Wire =
            serde_json::from_str(&text).map_err(|source| NetError::AccessParse { path: path.to_owned(), source })?;
        let secret = Secret::from_hex(&wire.secret)
            .map_err(|reason| NetError::AccessSecret { path: path.to_owned(), reason })?;
        Ok(Self { address: wire.address, secret, run_id: wire.run_id })
    }
}

fn access_io(path: &Path, source: io::Error) -> NetError {
    NetError::AccessIo { path: path.to_owned(), source }
}
