//! Bytes copied both ways between two connected sockets, on two threads of their own: the TCP
//! front's authenticated connections (daemon/postcompact/tcpfront.py). Once a connection has
//! shown the token, forwarding its calls costs the daemon's event loop nothing.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const BUF_BYTES: usize = 64 * 1024;
const STACK_BYTES: usize = 128 * 1024;
/// How long the other direction may go on after one side's peer went away: the rest of an
/// answer (a GOAWAY) still reaches a client that reads, never waits on one that stopped.
const GRACE: Duration = Duration::from_secs(5);

struct Ends {
    a: File,
    b: File,
    running: AtomicUsize,
}

impl Ends {
    /// Both sockets shut down: a thread blocked reading or writing either returns.
    fn shut(&self) {
        // SAFETY: both descriptors are owned by `self` and open while it lives.
        unsafe {
            libc::shutdown(self.a.as_raw_fd(), libc::SHUT_RDWR);
            libc::shutdown(self.b.as_raw_fd(), libc::SHUT_RDWR);
        }
    }
}

/// Two sockets joined until either side closes (or `close`); the descriptors are closed when
/// both threads have ended and the `Pump` is dropped.
pub struct Pump {
    ends: Arc<Ends>,
}

impl Pump {
    /// Starts copying `a` to `b` and `b` to `a`. A write that makes no progress for `stall`
    /// ends both: a peer that stopped reading (SIGSTOP) would otherwise hold the other side's
    /// answers, which gRPC's keepalive no longer frees once they are queued behind the pump.
    ///
    /// # Safety
    /// `a` and `b` must be open, blocking, connected stream sockets that the caller owns and
    /// hands over (nothing else may use or close them).
    pub unsafe fn start(a: RawFd, b: RawFd, stall: Duration) -> io::Result<Pump> {
        let ends = Arc::new(Ends {
            a: File::from_raw_fd(a),
            b: File::from_raw_fd(b),
            running: AtomicUsize::new(2),
        });
        for fd in [a, b] {
            set_send_timeout(fd, stall)?;
        }
        for (i, forward) in [true, false].into_iter().enumerate() {
            let e = Arc::clone(&ends);
            let spawned = thread::Builder::new()
                .name("postcompact-pump".into())
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    let (from, to) = if forward { (&e.a, &e.b) } else { (&e.b, &e.a) };
                    if copy(from, to) == End::PeerGone {
                        let until = Instant::now() + GRACE;
                        while e.running.load(Ordering::Acquire) > 1 && Instant::now() < until {
                            thread::sleep(Duration::from_millis(10));
                        }
                    }
                    e.shut();
                    e.running.fetch_sub(1, Ordering::Release);
                });
            if let Err(err) = spawned {
                ends.shut();
                ends.running.fetch_sub(2 - i, Ordering::Release); // the threads never started
                return Err(err);
            }
        }
        Ok(Pump { ends })
    }

    /// Whether both directions have ended.
    pub fn done(&self) -> bool {
        self.ends.running.load(Ordering::Acquire) == 0
    }

    /// Ends both directions (the threads return soon after).
    pub fn close(&self) {
        self.ends.shut();
    }
}

/// SO_SNDTIMEO: a blocking write that sends nothing for `t` fails (EAGAIN).
fn set_send_timeout(fd: RawFd, t: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: t.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: `tv` is a valid timeval for the call's duration; `fd` is open (the caller's).
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[derive(PartialEq, Eq)]
enum End {
    /// `from` ended or failed, or a write failed: both sides are shut down at once.
    Now,
    /// `to`'s peer went away: the other direction gets `GRACE` to finish (it may be blocked
    /// writing to a client that stopped reading, which only the shutdown wakes).
    PeerGone,
}

/// `from` copied to `to` until `from` ends, a write fails, or `to`'s peer goes away.
fn copy(mut from: &File, mut to: &File) -> End {
    let mut buf = vec![0u8; BUF_BYTES];
    let mut fds = [
        libc::pollfd {
            fd: from.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: to.as_raw_fd(),
            events: libc::POLLRDHUP,
            revents: 0,
        },
    ];
    loop {
        fds[0].revents = 0;
        fds[1].revents = 0;
        // SAFETY: `fds` is a valid array of two pollfd for the call's duration.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return End::Now;
        }
        if fds[0].revents == 0 {
            if fds[1].revents != 0 {
                return End::PeerGone; // `to`'s peer closed, or an error on it
            }
            continue;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => return End::Now,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return End::Now,
        };
        if to.write_all(&buf[..n]).is_err() {
            return End::Now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    #[test]
    fn copies_both_ways_and_ends_when_one_side_closes() {
        let (client, a) = UnixStream::pair().unwrap();
        let (b, server) = UnixStream::pair().unwrap();
        // SAFETY: the two descriptors are handed over and not used here again.
        let pump =
            unsafe { Pump::start(a.into_raw_fd(), b.into_raw_fd(), Duration::from_secs(10)) }
                .unwrap();
        let (mut client, mut server) = (client, server);
        client.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        server.write_all(b"pong").unwrap();
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"pong");
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !pump.done() {
            assert!(Instant::now() < deadline, "the pump did not end");
            thread::sleep(Duration::from_millis(5));
        }
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).unwrap(); // shut down: end of stream
        assert!(rest.is_empty());
    }

    #[test]
    fn a_peer_that_stops_reading_ends_the_pump() {
        let (client, a) = UnixStream::pair().unwrap();
        let (b, mut server) = UnixStream::pair().unwrap();
        // SAFETY: as above.
        let pump =
            unsafe { Pump::start(a.into_raw_fd(), b.into_raw_fd(), Duration::from_millis(200)) }
                .unwrap();
        let writer = thread::spawn(move || {
            let chunk = vec![0u8; 64 * 1024];
            while server.write_all(&chunk).is_ok() {} // until the pump gives up and shuts it
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while !pump.done() {
            assert!(
                Instant::now() < deadline,
                "the pump waited on a client that never reads"
            );
            thread::sleep(Duration::from_millis(5));
        }
        writer.join().unwrap();
        drop(client);
    }

    #[test]
    fn close_ends_a_pump_whose_sides_are_silent() {
        let (_client, a) = UnixStream::pair().unwrap();
        let (b, _server) = UnixStream::pair().unwrap();
        // SAFETY: as above.
        let pump =
            unsafe { Pump::start(a.into_raw_fd(), b.into_raw_fd(), Duration::from_secs(10)) }
                .unwrap();
        pump.close();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !pump.done() {
            assert!(Instant::now() < deadline, "the pump did not end");
            thread::sleep(Duration::from_millis(5));
        }
    }
}
