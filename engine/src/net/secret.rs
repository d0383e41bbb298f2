//! [`Secret`]: the per-run key that every coordinator–worker connection proves it knows.

use std::fmt;

use crate::net::{NetError, SecretError};

/// Length of a [`Secret`] in bytes.
pub const SECRET_LEN: usize = 32;

/// 32 random bytes generated once per run. They are the pre-shared key of
/// the Noise handshake (see [`crate::net`]), reach workers only through the
/// access file, and are never printed: `Debug` shows `Secret(<redacted>)`.
#[derive(Clone)]
pub struct Secret([u8; SECRET_LEN]);

impl Secret {
    /// A fresh secret from the operating system's random source.
    pub fn generate() -> Result<Self, NetError> {
        let mut bytes = [0; SECRET_LEN];
        getrandom::fill(&mut bytes).map_err(NetError::Random)?;
        Ok(Self(bytes))
    }

    /// The raw key bytes.
    pub(super) fn as_bytes(&self) -> &[u8; SECRET_LEN] {
        &self.0
    }

    /// The secret as 64 lowercase hex digits (the access file's encoding).
    pub(super) fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 64 hex digits; the error says what is wrong without echoing the text.
    pub(super) fn from_hex(text: &str) -> Result<Self, SecretError> {
        let text = text.trim();
        if text.len() != 2 * SECRET_LEN {
            return Err(SecretError::Length { expected: 2 * SECRET_LEN, found: text.len() });
        }
        let mut bytes = [0; SECRET_LEN];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| SecretError::NotHex)?;
        Ok(Self(bytes))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}
