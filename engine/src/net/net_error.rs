//! [`NetError`]: everything that can go wrong with the coordinator–worker transport.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// A transport or access-file failure.
///
/// [`NetError::Refused`] is the one a coordinator logs and moves past: a peer
/// that does not know the run's secret (or does not speak flow's protocol at
/// all) never becomes a worker, and the run goes on.
#[derive(Debug, Error)]
pub enum NetError {
    /// The OS random source failed while generating a secret.
    #[error("cannot generate a random secret: {0}")]
    Random(getrandom::Error),
    /// The TCP connection to the coordinator could not be opened.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// The `host:port` that was dialled.
        address: String,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// The handshake failed: the peer has a different secret, is not a flow
    /// peer, went silent, or hung up. Nothing was exchanged with it.
    #[error("refused {peer}: {reason}")]
    Refused {
        /// The peer's address (or `unknown peer`).
        peer: String,
        /// What went wrong, for the log.
        reason: HandshakeError,
    },
    /// An established channel received bytes that are not a valid frame: a
    /// frame that fails authentication, a bad header, or a connection cut in
    /// the middle of a message. The channel must be dropped.
    #[error("corrupt traffic from the peer: {0}")]
    Corrupt(String),
    /// A message exceeds [`MAX_MESSAGE`](crate::net::MAX_MESSAGE) (on send or on receive).
    #[error("message of {size} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The message's encoded size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// A message could not be encoded for sending.
    #[error("cannot encode a message: {0}")]
    Encode(#[source] postcard::Error),
    /// An authenticated message did not decode as the expected type: the two
    /// ends run incompatible versions of flow.
    #[error("cannot decode a message from the peer (incompatible flow versions?): {0}")]
    Decode(#[source] postcard::Error),
    /// Reading from or writing to an established connection failed.
    #[error("connection error: {0}")]
    Io(#[from] io::Error),
    /// The access file does not exist.
    #[error("access file `{}` does not exist (is the run started, and is this its run directory?)", path.display())]
    AccessMissing {
        /// The file.
        path: PathBuf,
    },
    /// The access file could not be read or written.
    #[error("access file `{}`: {source}", path.display())]
    AccessIo {
        /// The file.
        path: PathBuf,
        /// The IO error (it names the operation).
        #[source]
        source: io::Error,
    },
    /// The access file is not valid JSON of the expected shape.
    #[error("access file `{}` is malformed: {source}", path.display())]
    AccessParse {
        /// The file.
        path: PathBuf,
        /// The JSON error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The access file's `secret` is not 64 hex digits.
    #[error("access file `{}`: the secret {reason}", path.display())]
    AccessSecret {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: SecretError,
    },
}

/// Why a handshake did not give an authenticated channel.
#[derive(Debug, Error)]
pub enum HandshakeError {
    /// The Noise handshake could not be set up (a bug, or a broken build of `snow`).
    #[error("cannot set up the Noise handshake: {0}")]
    Setup(snow::Error),
    /// A handshake message could not be written, or the transport not derived.
    #[error("handshake failed: {0}")]
    Noise(snow::Error),
    /// Reading or writing the connection failed.
    #[error("handshake failed: {0}")]
    Io(io::Error),
    /// The peer closed the connection in the middle of the handshake.
    #[error("the peer hung up during the handshake (wrong secret?)")]
    HungUp,
    /// The peer sent a handshake message larger than flow's.
    #[error("sent a {len}-byte handshake message: not a flow peer")]
    FrameTooLarge {
        /// The length the peer announced.
        len: usize,
    },
    /// The coordinator's reply does not authenticate with the worker's secret.
    #[error("the coordinator's handshake reply does not authenticate")]
    ReplyNotAuthentic,
    /// The worker's first message does not authenticate with the run's secret.
    #[error("wrong secret, or not a flow peer (the handshake does not authenticate)")]
    WrongSecret,
    /// The handshake did not finish before its deadline.
    #[error("the handshake did not complete in time")]
    TimedOut,
    /// The coordinator turned the connection away before the handshake:
    /// too many connections were authenticating at once.
    #[error("the coordinator is busy: too many connections are authenticating")]
    Busy,
}

/// Why the text of a secret is not one (it never echoes the text).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SecretError {
    /// The text has the wrong length.
    #[error("must be {expected} hex digits, found {found} characters")]
    Length {
        /// The number of hex digits of a secret.
        expected: usize,
        /// The number of characters found.
        found: usize,
    },
    /// The text has a character that is not a hex digit.
    #[error("contains characters that are not hex digits")]
    NotHex,
}
