//! The coordinator–worker transport: authenticated, encrypted message
//! channels over TCP, and the access file that tells workers where to
//! connect and which secret to prove ("Remote workers and allocation
//! queues" in `docs/design/architecture.md`).
//!
//! # How a worker joins a run
//!
//! The coordinator generates a [`Secret`] (32 random bytes) for the run,
//! listens on a TCP port, and writes an [`AccessFile`] (address, secret, run
//! id; JSON, mode `0600`, replaced atomically) into the run directory.
//! Workers get `--access FILE`, so neither the address nor the secret is on a
//! command line where `ps` would show it. A worker calls [`connect`]; the
//! coordinator hands each accepted socket to [`accept`]. Both return a
//! [`Sender`] and a [`Receiver`] that can be used from different tasks at the
//! same time.
//!
//! # Protocol
//!
//! **Handshake.** Noise `Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s` (the `snow`
//! crate) with the run's secret as the pre-shared key and the prologue
//! `flow-net/2`. The worker is the initiator. Each handshake message travels
//! as `[u16 big-endian length][Noise message]` (48 bytes each). Both sides
//! generate fresh ephemeral X25519 keys, so every connection gets its own
//! session keys (forward secrecy with respect to the ephemeral keys), and
//! because the PSK is mixed in before the first message, the responder
//! rejects a peer with a different secret on its very first message: the
//! coordinator returns [`NetError::Refused`] naming the peer and closes the
//! socket; the worker sees the hang-up as `Refused` too. Checking that first
//! message takes hashing and one empty authentication tag, no key exchange,
//! so the coordinator does it ([`knock`]) before a connection holds anything
//! but its descriptor, and answers ([`Knock::answer`]) only peers that pass.
//! Handshake messages longer than 256 bytes are refused without reading
//! them, and a peer that does not finish within [`HANDSHAKE_TIMEOUT`] (10 s;
//! the coordinator sets shorter deadlines) is refused. Nothing else is
//! exchanged before the handshake has authenticated the peer.
//!
//! **Transport frames.** After the handshake each direction has its own
//! ChaCha20-Poly1305 key. Every frame on the wire is `[u16 big-endian
//! length][ciphertext + 16-byte tag]`, at most 65535 bytes. Nonces are
//! implicit: each direction counts frames from 0, the sender encrypts frame
//! *n* with nonce *n* and the receiver decrypts with the nonce it expects
//! next. A dropped, replayed, reordered or altered frame therefore fails
//! authentication ([`NetError::Corrupt`]) and no nonce is ever reused under a
//! key. Because each half owns its direction's counter and the session keys
//! are shared read-only (`snow::StatelessTransportState` behind an `Arc`),
//! the halves need no lock.
//!
//! **Messages.** An application message is encoded with `postcard` and
//! prefixed with its encoded length as a `u32` (big-endian). The messages
//! form one plaintext stream per direction, cut into frames of up to 65519
//! bytes: messages sent together share frames (one encryption and one
//! write for a batch of small messages) and a large one spans several.
//! Messages are limited to [`MAX_MESSAGE`] (64 MiB), checked when sending
//! and, from the header, when receiving, before the body is buffered.
//! A clean TCP close between messages ends the stream (`Ok(None)` from
//! [`Receiver::recv`]); a close inside a message is `Corrupt`.
//!
//! The secret never leaves the access file and the process's memory: it is
//! not logged (`Debug` redacts it), not sent over the wire, and not derived
//! from anything guessable.

mod access;
mod channel;
mod net_error;
mod secret;

#[cfg(test)]
mod tests;

pub use access::{ACCESS_FILE_MODE, AccessFile};
pub use channel::{
    HANDSHAKE_TIMEOUT, Knock, MAX_MESSAGE, Receiver, Sender, accept, accept_within, connect, encode, knock, turn_away,
};
pub use net_error::{HandshakeError, NetError, SecretError};
pub use secret::{SECRET_LEN, Secret};
