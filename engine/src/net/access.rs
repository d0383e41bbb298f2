//! [`AccessFile`]: how a worker finds and proves itself to a run's coordinator.
//!
//! The coordinator writes it into the run directory; workers are pointed at
//! it with `--access FILE`, so neither the address nor the secret ever
//! appears on a command line (visible to every user in `ps`). The file is
//! JSON, readable by its owner only (mode `0600`), and replaced atomically so
//! a worker never reads half of it:
//!
//! ```json
//! {"address": "node17:40123", "secret": "<64 hex digits>", "run_id": "20240501-1"}
//! ```

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use fs_err::os::unix::fs::OpenOptionsExt;
use serde::{Deserialize, Serialize};

use crate::net::{NetError, Secret};

/// Permissions of the access file: read and write for its owner only.
pub const ACCESS_FILE_MODE: u32 = 0o600;

/// The contents of a run's access file.
#[derive(Clone, Debug)]
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

impl AccessFile {
    /// Writes the file at `path` with mode `0600`, atomically: the JSON goes
    /// to a temporary file beside it, which is then renamed over `path`.
    pub fn write(&self, path: &Path) -> Result<(), NetError> {
        let wire = Wire { address: self.address.clone(), secret: self.secret.to_hex(), run_id: self.run_id.clone() };
        let mut json = serde_json::to_vec_pretty(&wire).map_err(|e| access_io(path, e.into()))?;
        json.push(b'\n');
        let temp = temp_path(path);
        let result = write_new(&temp, &json).and_then(|()| fs_err::rename(&temp, path));
        if let Err(e) = result {
            let _ = fs_err::remove_file(&temp);
            return Err(access_io(path, e));
        }
        Ok(())
    }

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

/// Creates `path` afresh with [`ACCESS_FILE_MODE`] and writes `bytes` durably.
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // A leftover from a crashed writer may have other permissions: start anew.
    match fs_err::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = fs_err::OpenOptions::new().write(true).create_new(true).mode(ACCESS_FILE_MODE).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// `.<name>.<pid>.tmp` in the same directory, so the rename stays on one filesystem.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(|| "access".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

fn access_io(path: &Path, source: io::Error) -> NetError {
    NetError::AccessIo { path: path.to_owned(), source }
}
