//! The encrypted message channel: a Noise handshake, then a [`Sender`] and a
//! [`Receiver`] that work independently (see [`crate::net`] for the protocol).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use snow::{HandshakeState, StatelessTransportState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::time::timeout;

use crate::net::{HandshakeError, NetError, Secret};

/// The largest application message, in encoded bytes, that is sent or accepted.
pub const MAX_MESSAGE: usize = 64 << 20;

/// How long a peer has to complete the handshake (and a worker to open the
/// TCP connection) before it is refused, so a silent peer cannot hold a slot.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The Noise protocol: no static keys, authentication by the pre-shared key.
const NOISE_PARAMS: &str = "Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s";
/// Mixed into the handshake hash: peers speaking another protocol version fail the handshake.
const PROLOGUE: &[u8] = b"flow-net/2";
/// The largest Noise message (the length prefix is a `u16`).
const MAX_FRAME: usize = 65535;
/// The ChaChaPoly authentication tag on every transport frame.
const TAG_LEN: usize = 16;
/// The most plaintext one frame carries.
const MAX_CHUNK: usize = MAX_FRAME - TAG_LEN;
/// Each message's plaintext starts with its encoded length as a `u32` (big-endian).
const HEADER_LEN: usize = 4;
/// NNpsk0's two handshake messages are 48 bytes each; anything much larger is not a flow peer.
const MAX_HANDSHAKE_FRAME: usize = 256;
/// How many bytes [`Sender::send_batch`] gathers before writing.
const BATCH: usize = 256 * 1024;
/// How much room the receiver makes for each socket read.
const READ_CHUNK: usize = 256 * 1024;
/// Buffers grown past this by a large message are shrunk back to it afterwards.
const KEEP_CAPACITY: usize = 1 << 20;

/// Dials the coordinator at `address` (`host:port`) and runs the handshake
/// as the initiator. Fails with [`NetError::Connect`] if the TCP connection
/// cannot be made and with [`NetError::Refused`] if the coordinator does not
/// accept `secret`.
pub async fn connect(address: &str, secret: &Secret) -> Result<(Sender, Receiver), NetError> {
    let connect_error = |source| NetError::Connect { address: address.to_owned(), source };
    let mut stream = match timeout(HANDSHAKE_TIMEOUT, TcpStream::connect(address)).await {
        Ok(stream) => stream.map_err(connect_error)?,
        Err(_) => return Err(connect_error(io::Error::new(io::ErrorKind::TimedOut, "connection timed out"))),
    };
    let handshake = async {
        let state = new_handshake(secret, true)?;
        initiate(&mut stream, state).await
    };
    let transport = finish_handshake(address.to_owned(), timeout(HANDSHAKE_TIMEOUT, handshake).await)?;
    Ok(split(stream, transport))
}

/// Turns away a connection the coordinator has no room for now (too many
/// are authenticating, or waiting to): an empty handshake frame, which no handshake sends, tells
/// the worker to try again later (a wrong secret gets only a hang-up).
/// Best effort: the connection is dropped either way.
pub fn turn_away(stream: TcpStream) {
    let _ = stream.try_write(&[0, 0]);
}

/// Runs the handshake as the responder on a connection the coordinator has
/// just accepted. A peer that does not know `secret`, speaks anything else,
/// or does not finish within [`HANDSHAKE_TIMEOUT`] gets [`NetError::Refused`]
/// (which names it, for the log) and is disconnected.
pub async fn accept(stream: TcpStream, secret: &Secret) -> Result<(Sender, Receiver), NetError> {
    accept_within(stream, secret, HANDSHAKE_TIMEOUT).await
}

/// [`accept`] with a chosen handshake deadline.
pub async fn accept_within(
    mut stream: TcpStream,
    secret: &Secret,
    limit: Duration,
) -> Result<(Sender, Receiver), NetError> {
    let peer = peer_of(&stream);
    let handshake = async {
        let knock = knock(&mut stream, secret).await?;
        knock.answer(stream).await
    };
    match timeout(limit, handshake).await {
        Ok(outcome) => outcome,
        Err(_) => Err(NetError::Refused { peer, reason: HandshakeError::TimedOut }),
    }
}

/// Reads a peer's first handshake message and checks it against `secret`:
/// cheap (hashing and one empty authentication tag, no key exchange), so the
/// coordinator learns whether a peer knows the run's secret before it spends
/// anything more on it. Sets no deadline: the caller does.
pub async fn knock(stream: &mut TcpStream, secret: &Secret) -> Result<Knock, NetError> {
    let peer = peer_of(stream);
    let refused = |reason| NetError::Refused { peer: peer.clone(), reason };
    let mut state = new_handshake(secret, false).map_err(refused)?;
    let mut frame = [0; MAX_HANDSHAKE_FRAME];
    let len = read_handshake_frame(stream, &mut frame).await.map_err(refused)?;
    let mut payload = [0; MAX_HANDSHAKE_FRAME];
    state.read_message(&frame[..len], &mut payload).map_err(|_| refused(HandshakeError::WrongSecret))?;
    Ok(Knock(state))
}

/// A connection whose first handshake message checked out: its peer knows
/// the run's secret, or replays a message of one that does (and then cannot
/// read the answer). [`Knock::answer`] finishes the handshake.
pub struct Knock(HandshakeState);

impl Knock {
    /// Sends the responder's message (a key exchange) and returns the channel.
    pub async fn answer(self, mut stream: TcpStream) -> Result<(Sender, Receiver), NetError> {
        let Self(mut state) = self;
        let refused = |stream: &TcpStream, reason| NetError::Refused { peer: peer_of(stream), reason };
        let mut frame = [0; MAX_HANDSHAKE_FRAME];
        let len = state.write_message(&[], &mut frame).map_err(|e| refused(&stream, HandshakeError::Noise(e)))?;
        if let Err(reason) = write_handshake_frame(&mut stream, &frame[..len]).await {
            return Err(refused(&stream, reason));
        }
        let transport =
            state.into_stateless_transport_mode().map_err(|e| refused(&stream, HandshakeError::Noise(e)))?;
        Ok(split(stream, transport))
    }
}

/// The peer's address, for a refusal.
fn peer_of(stream: &TcpStream) -> String {
    stream.peer_addr().map_or_else(|_| "unknown peer".to_owned(), |a| a.to_string())
}

/// Turns the handshake's outcome into the transport state or a [`NetError::Refused`].
fn finish_handshake(
    peer: String,
    outcome: Result<Result<StatelessTransportState, HandshakeError>, tokio::time::error::Elapsed>,
) -> Result<StatelessTransportState, NetError> {
    match outcome {
        Ok(Ok(transport)) => Ok(transport),
        Ok(Err(reason)) => Err(NetError::Refused { peer, reason }),
        Err(_) => Err(NetError::Refused { peer, reason: HandshakeError::TimedOut }),
    }
}

fn new_handshake(secret: &Secret, initiator: bool) -> Result<HandshakeState, HandshakeError> {
    let setup = HandshakeError::Setup;
    let builder = snow::Builder::new(NOISE_PARAMS.parse().map_err(setup)?)
        .prologue(PROLOGUE)
        .and_then(|b| b.psk(0, secret.as_bytes()))
        .map_err(setup)?;
    if initiator { builder.build_initiator() } else { builder.build_responder() }.map_err(setup)
}

/// The initiator's side: `-> psk, e` then `<- e, ee`.
async fn initiate(
    stream: &mut TcpStream,
    mut state: HandshakeState,
) -> Result<StatelessTransportState, HandshakeError> {
    let mut frame = [0; MAX_HANDSHAKE_FRAME];
    let len = state.write_message(&[], &mut frame).map_err(HandshakeError::Noise)?;
    write_handshake_frame(stream, &frame[..len]).await?;
    let len = read_handshake_frame(stream, &mut frame).await?;
    if len == 0 {
        return Err(HandshakeError::Busy);
    }
    let mut payload = [0; MAX_HANDSHAKE_FRAME];
    state.read_message(&frame[..len], &mut payload).map_err(|_| HandshakeError::ReplyNotAuthentic)?;
    state.into_stateless_transport_mode().map_err(HandshakeError::Noise)
}

async fn write_handshake_frame(stream: &mut TcpStream, message: &[u8]) -> Result<(), HandshakeError> {
    let mut frame = Vec::with_capacity(2 + message.len());
    frame.extend_from_slice(&(message.len() as u16).to_be_bytes());
    frame.extend_from_slice(message);
    stream.write_all(&frame).await.map_err(HandshakeError::Io)
}

/// Reads one length-prefixed handshake message into `frame`; returns its length.
async fn read_handshake_frame(
    stream: &mut TcpStream,
    frame: &mut [u8; MAX_HANDSHAKE_FRAME],
) -> Result<usize, HandshakeError> {
    let io_error = |e: io::Error| match e.kind() {
        io::ErrorKind::UnexpectedEof => HandshakeError::HungUp,
        _ => HandshakeError::Io(e),
    };
    let mut prefix = [0; 2];
    stream.read_exact(&mut prefix).await.map_err(io_error)?;
    let len = usize::from(u16::from_be_bytes(prefix));
    if len > MAX_HANDSHAKE_FRAME {
        return Err(HandshakeError::FrameTooLarge { len });
    }
    stream.read_exact(&mut frame[..len]).await.map_err(io_error)?;
    Ok(len)
}

fn split(stream: TcpStream, transport: StatelessTransportState) -> (Sender, Receiver) {
    // Jobs and replies are small and latency-bound: do not let Nagle hold them back.
    // Failing to set it only costs latency, so the error is ignored.
    let _ = stream.set_nodelay(true);
    let transport = Arc::new(transport);
    let (read, write) = stream.into_split();
    let sender = Sender {
        stream: write,
        transport: Arc::clone(&transport),
        nonce: 0,
        plain: Vec::new(),
        out: Vec::new(),
        sent: 0,
    };
    let receiver =
        Receiver { stream: read, transport, nonce: 0, raw: Vec::new(), start: 0, plain: Vec::new(), next: 0 };
    (sender, receiver)
}

/// Encodes `msg` with postcard behind the messages in `plain`, with its
/// header, as [`Sender::push`] does: messages can be encoded on one thread
/// and handed to [`Sender::push_encoded`] on another. Fails, leaving
/// `plain` as it was, when `msg` is over [`MAX_MESSAGE`].
pub fn encode<T: Serialize + ?Sized>(msg: &T, plain: &mut Vec<u8>) -> Result<(), NetError> {
    let begin = plain.len();
    plain.extend_from_slice(&[0; HEADER_LEN]);
    if let Err(e) = postcard::to_extend(msg, Append(plain)) {
        plain.truncate(begin);
        return Err(NetError::Encode(e));
    }
    let size = plain.len() - begin - HEADER_LEN;
    if size > MAX_MESSAGE {
        plain.truncate(begin);
        return Err(NetError::TooLarge { size: size as u64, max: MAX_MESSAGE as u64 });
    }
    plain[begin..begin + HEADER_LEN].copy_from_slice(&(size as u32).to_be_bytes());
    Ok(())
}

/// The sending half of a channel. It can live in a different task from its
/// [`Receiver`]; dropping it closes the sending direction, which the peer's
/// receiver sees as the end of the stream.
pub struct Sender {
    stream: OwnedWriteHalf,
    transport: Arc<StatelessTransportState>,
    /// The nonce of the next frame; each frame uses a new one.
    nonce: u64,
    /// Messages pushed and not yet encrypted: each its header, then its postcard bytes.
    plain: Vec<u8>,
    /// Encrypted frames not yet (wholly) written.
    out: Vec<u8>,
    /// How much of `out` is already written to the socket.
    sent: usize,
}

impl Sender {
    /// Encodes `msg` with postcard, encrypts it and writes it out, after
    /// any messages [`Sender::push`]ed before it.
    ///
    /// `msg` is encoded before the returned future is first polled, and the
    /// future does not borrow it, so `T` need not be `Sync` for the future to
    /// be `Send`. If the future is cancelled, the message is either sent
    /// whole or its remaining bytes go out at the start of the next `send`,
    /// `flush` or `close`: the stream stays well-formed either way.
    pub fn send<T: Serialize + ?Sized>(
        &mut self,
        msg: &T,
    ) -> impl Future<Output = Result<(), NetError>> + Send + use<'_, T> {
        let pushed = self.push(msg);
        async move {
            pushed?;
            self.flush().await
        }
    }

    /// Encodes `msg` behind the messages not yet written; it goes out with
    /// them at the next [`Sender::flush`] or `send`. Pushed messages share
    /// frames, so several cost one encryption and one write, and wake the
    /// peer once.
    pub fn push<T: Serialize + ?Sized>(&mut self, msg: &T) -> Result<(), NetError> {
        encode(msg, &mut self.plain)
    }

    /// Puts messages [`encode`]d elsewhere behind the messages not yet
    /// written, as [`Sender::push`] would have.
    pub fn push_encoded(&mut self, messages: &[u8]) {
        self.plain.extend_from_slice(messages);
    }

    /// Whether less than a batch waits to be written: a writer draining a
    /// queue pushes more before it flushes.
    pub fn has_room(&self) -> bool {
        self.waiting() < BATCH
    }

    /// How many bytes wait to be written.
    fn waiting(&self) -> usize {
        self.plain.len() + self.out.len() - self.sent
    }

    /// Sends `first`, and with it whatever `more` yields right away, in as
    /// few writes as possible: up to `BATCH` bytes, so a writer that
    /// drains a queue wakes its peer once per batch, not once per message.
    pub async fn send_batch<T: Serialize>(
        &mut self,
        first: &T,
        mut more: impl FnMut() -> Option<T>,
    ) -> Result<(), NetError> {
        self.push(first)?;
        while self.waiting() < BATCH {
            let Some(msg) = more() else { break };
            self.push(&msg)?;
        }
        self.flush().await
    }

    /// Finishes any interrupted send and closes the sending direction.
    pub async fn close(mut self) -> Result<(), NetError> {
        self.flush().await?;
        self.stream.shutdown().await?;
        Ok(())
    }

    /// Cuts the pushed messages into frames appended to `out`, advancing
    /// the nonce only if all of them were made.
    fn seal(&mut self) -> Result<(), NetError> {
        let kept = self.out.len();
        let mut nonce = self.nonce;
        for chunk in self.plain.chunks(MAX_CHUNK) {
            let start = self.out.len();
            self.out.resize(start + 2 + chunk.len() + TAG_LEN, 0);
            let len = match self.transport.write_message(nonce, chunk, &mut self.out[start + 2..]) {
                Ok(len) => len,
                Err(e) => {
                    self.out.truncate(kept);
                    return Err(NetError::Io(io::Error::other(format!("cannot encrypt a frame: {e}"))));
                }
            };
            self.out[start..start + 2].copy_from_slice(&(len as u16).to_be_bytes());
            nonce += 1;
        }
        self.nonce = nonce;
        self.plain.clear();
        self.plain.shrink_to(KEEP_CAPACITY);
        Ok(())
    }

    /// Writes every pushed message. Each `write` is cancel-safe, and `sent` only counts written bytes.
    pub async fn flush(&mut self) -> Result<(), NetError> {
        self.seal()?;
        while self.sent < self.out.len() {
            let written = self.stream.write(&self.out[self.sent..]).await?;
            if written == 0 {
                return Err(NetError::Io(io::ErrorKind::WriteZero.into()));
            }
            self.sent += written;
        }
        self.out.clear();
        self.sent = 0;
        self.out.shrink_to(KEEP_CAPACITY);
        Ok(())
    }
}

/// Lets postcard append to a buffer it does not own.
struct Append<'a>(&'a mut Vec<u8>);

impl Extend<u8> for Append<'_> {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, bytes: I) {
        self.0.extend(bytes);
    }
}

/// The receiving half of a channel. It can live in a different task from its
/// [`Sender`]. [`Receiver::recv`] is cancel-safe: a partially received
/// message is kept and completed by the next call.
pub struct Receiver {
    stream: OwnedReadHalf,
    transport: Arc<StatelessTransportState>,
    /// The nonce the next frame must have been encrypted with.
    nonce: u64,
    /// Bytes read from the socket; `raw[start..]` is not yet decrypted.
    raw: Vec<u8>,
    start: usize,
    /// Decrypted bytes; `plain[next..]` is not yet decoded.
    plain: Vec<u8>,
    next: usize,
}

impl Receiver {
    /// Receives the next message, or `Ok(None)` when the peer closed the
    /// connection cleanly between messages. After an error the channel is
    /// out of step with its peer and should be dropped.
    pub async fn recv<T: DeserializeOwned>(&mut self) -> Result<Option<T>, NetError> {
        loop {
            if let Some(len) = self.complete()? {
                let body = &self.plain[self.next + HEADER_LEN..self.next + len];
                let decoded = match postcard::take_from_bytes(body) {
                    Ok((msg, [])) => Ok(Some(msg)),
                    Ok((_, rest)) => Err(NetError::Corrupt(format!("{} bytes left over after a message", rest.len()))),
                    Err(e) => Err(NetError::Decode(e)),
                };
                self.next += len;
                if self.next == self.plain.len() {
                    self.plain.clear();
                    self.next = 0;
                    self.plain.shrink_to(KEEP_CAPACITY);
                }
                return decoded;
            }
            if self.decrypt_frame()? {
                continue;
            }
            if self.start > 0 {
                self.raw.drain(..self.start);
                self.start = 0;
            }
            self.raw.reserve(READ_CHUNK);
            if self.stream.read_buf(&mut self.raw).await? == 0 {
                if self.raw.is_empty() && self.next == self.plain.len() {
                    return Ok(None);
                }
                return Err(NetError::Corrupt("the connection closed in the middle of a message".to_owned()));
            }
        }
    }

    /// The length (header included) of the next message once it is wholly
    /// decrypted. A header announcing more than [`MAX_MESSAGE`] is refused
    /// as soon as it arrives, before its body is buffered.
    fn complete(&mut self) -> Result<Option<usize>, NetError> {
        let pending = &self.plain[self.next..];
        let Some(header) = pending.first_chunk::<HEADER_LEN>() else { return Ok(None) };
        let size = u32::from_be_bytes(*header) as usize;
        if size > MAX_MESSAGE {
            return Err(NetError::TooLarge { size: size as u64, max: MAX_MESSAGE as u64 });
        }
        let len = HEADER_LEN + size;
        if pending.len() >= len {
            return Ok(Some(len));
        }
        // Make room for the whole message at once.
        self.plain.reserve(len - pending.len());
        Ok(None)
    }

    /// Decrypts the next frame in `raw`, if it has wholly arrived, behind
    /// the undecoded bytes in `plain`.
    fn decrypt_frame(&mut self) -> Result<bool, NetError> {
        let available = &self.raw[self.start..];
        let Some(prefix) = available.first_chunk::<2>() else { return Ok(false) };
        let len = usize::from(u16::from_be_bytes(*prefix));
        if len < TAG_LEN {
            return Err(NetError::Corrupt(format!("a {len}-byte frame is shorter than its tag")));
        }
        let Some(frame) = available.get(2..2 + len) else { return Ok(false) };
        if self.next > 0 {
            self.plain.drain(..self.next);
            self.next = 0;
        }
        let filled = self.plain.len();
        self.plain.resize(filled + len - TAG_LEN, 0);
        let decrypted = self.transport.read_message(self.nonce, frame, &mut self.plain[filled..]).map_err(|_| {
            NetError::Corrupt(format!(
                "frame {} does not authenticate (tampered, replayed or out of order)",
                self.nonce
            ))
        })?;
        self.plain.truncate(filled + decrypted);
        self.nonce += 1;
        self.start += 2 + len;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tests::pair;

    /// Sends one raw, correctly encrypted frame through `sender`.
    async fn send_frame(sender: &mut Sender, plain: &[u8]) {
        let mut frame = vec![0; 2 + plain.len() + TAG_LEN];
        let len = sender.transport.write_message(sender.nonce, plain, &mut frame[2..]).expect("encrypt");
        frame[..2].copy_from_slice(&(len as u16).to_be_bytes());
        sender.nonce += 1;
        sender.stream.write_all(&frame).await.expect("write frame");
    }

    #[tokio::test]
    async fn oversized_header_is_refused_before_buffering() {
        let secret = Secret::generate().expect("secret");
        let ((mut tx, _), (_, mut rx)) = pair(&secret).await;
        send_frame(&mut tx, &(MAX_MESSAGE as u32 + 1).to_be_bytes()).await;
        assert!(matches!(rx.recv::<()>().await, Err(NetError::TooLarge { .. })));
    }

    #[tokio::test]
    async fn messages_share_frames_and_span_them() {
        let secret = Secret::generate().expect("secret");
        let ((mut tx, _), (_, mut rx)) = pair(&secret).await;
        // Two one-byte messages and the start of a third in one frame, its rest in the next.
        send_frame(&mut tx, &[0, 0, 0, 1, 7, 0, 0, 0, 1, 8, 0, 0]).await;
        send_frame(&mut tx, &[0, 1, 9]).await;
        for expected in [7u8, 8, 9] {
            assert_eq!(rx.recv::<u8>().await.expect("message"), Some(expected));
        }
        let big = vec![3u8; 3 * MAX_CHUNK];
        tx.push(&1u8).expect("push");
        tx.send(&big).await.expect("send");
        assert_eq!(rx.recv::<u8>().await.expect("small"), Some(1));
        assert_eq!(rx.recv::<Vec<u8>>().await.expect("large"), Some(big));
        assert_eq!(tx.nonce, 2 + 4, "one frame for both the small message and the large one's start");
    }

    #[tokio::test]
    async fn bytes_left_inside_a_message_are_corrupt() {
        let secret = Secret::generate().expect("secret");
        let ((mut tx, _), (_, mut rx)) = pair(&secret).await;
        send_frame(&mut tx, &[0, 0, 0, 2, 7, 7]).await;
        assert!(matches!(rx.recv::<u8>().await, Err(NetError::Corrupt(_))));
    }

    #[tokio::test]
    async fn eof_inside_a_message_is_corrupt() {
        let secret = Secret::generate().expect("secret");
        let ((mut tx, _), (_, mut rx)) = pair(&secret).await;
        send_frame(&mut tx, &[0, 0, 0, 9, 1]).await;
        drop(tx);
        assert!(matches!(rx.recv::<Vec<u8>>().await, Err(NetError::Corrupt(_))));
    }
}
