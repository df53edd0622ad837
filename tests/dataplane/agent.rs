//! The roles the test binary plays inside a namespace (`ip netns exec <ns> <self> __agent ...`):
//! a tiny TCP server that answers with its name, a client that connects many times and prints
//! where each attempt landed, and a sysctl writer (`/proc/sys/net` is per namespace).

use std::io::{BufRead, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

/// First argument that switches the binary into agent mode.
pub(crate) const AGENT_ARG: &str = "__dataplane-agent";

/// Runs the agent role named in `args` (after [`AGENT_ARG`]); returns the exit code.
pub(crate) fn main(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("probe") => probe(&args[1..]),
        Some("write") => write_file(&args[1..]),
        other => Err(format!("unknown agent role {other:?}")),
    };
    match result {
        Ok(()) => 0,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "agent: {err}");
            1
        }
    }
}

/// `write <path> <value>`: sets a sysctl of the current namespace.
fn write_file(args: &[String]) -> Result<(), String> {
    let [path, value] = args else { return Err("usage: write <path> <value>".into()) };
    std::fs::write(path, value).map_err(|err| format!("{path}: {err}"))
}

/// `serve <name> <[udp:]ip:port>...`: binds every address, prints `ready`, and answers each
/// TCP connection (or UDP datagram) with `<name> <local addr> <peer addr>\n`. Exits when stdin
/// closes, so a server never outlives the test process that started it.
fn serve(args: &[String]) -> Result<(), String> {
    let Some((name, addrs)) = args.split_first() else {
        return Err("usage: serve <name> <addr>...".into());
    };
    let mut listeners = Vec::new();
    let mut sockets = Vec::new();
    for addr in addrs {
        let (udp, text) = match addr.strip_prefix("udp:") {
            Some(rest) => (true, rest),
            None => (false, addr.as_str()),
        };
        let addr: SocketAddr = text.parse().map_err(|err| format!("{text}: {err}"))?;
        if udp {
            sockets.push(UdpSocket::bind(addr).map_err(|err| format!("bind udp {addr}: {err}"))?);
        } else {
            listeners.push(TcpListener::bind(addr).map_err(|err| format!("bind {addr}: {err}"))?);
        }
    }
    for listener in listeners {
        let name = name.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream, &name);
            }
        });
    }
    for socket in sockets {
        let name = name.clone();
        std::thread::spawn(move || {
            let local = socket.local_addr().map(|a| a.to_string()).unwrap_or_default();
            let mut buf = [0u8; 64];
            while let Ok((_, peer)) = socket.recv_from(&mut buf) {
                let _ = socket.send_to(format!("{name} {local} {peer}\n").as_bytes(), peer);
            }
        });
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "ready").and_then(|()| stdout.flush()).map_err(|err| err.to_string())?;
    // Block until the parent closes our stdin (or dies).
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    Ok(())
}

fn answer(mut stream: TcpStream, name: &str) {
    let local = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let _ = stream.write_all(format!("{name} {local} {peer}\n").as_bytes());
    let _ = stream.shutdown(Shutdown::Write);
}

/// `probe <ip:port> <count> <timeout-ms> [tcp|udp]`: connects `count` times (UDP: one datagram
/// from a fresh socket each time), one line per attempt: `ok <name> <server local addr> <peer
/// addr the server saw>`, `refused`, `timeout`, `unreachable` or `error <text>`.
fn probe(args: &[String]) -> Result<(), String> {
    let (args, udp) = match args {
        [rest @ .., last] if last == "udp" => (rest, true),
        [rest @ .., last] if last == "tcp" => (rest, false),
        _ => (args, false),
    };
    let [addr, count, timeout] = args else {
        return Err("usage: probe <addr> <count> <timeout-ms> [tcp|udp]".into());
    };
    let addr: SocketAddr = addr.parse().map_err(|err| format!("{addr}: {err}"))?;
    let count: u32 = count.parse().map_err(|err| format!("{count}: {err}"))?;
    let timeout =
        Duration::from_millis(timeout.parse().map_err(|err| format!("{timeout}: {err}"))?);
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for _ in 0..count {
        let line = if udp { attempt_udp(addr, timeout) } else { attempt(addr, timeout) };
        writeln!(out, "{line}").map_err(|err| err.to_string())?;
    }
    out.flush().map_err(|err| err.to_string())
}

fn attempt_udp(addr: SocketAddr, timeout: Duration) -> String {
    use std::io::ErrorKind;
    let any = if addr.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" };
    let socket = match UdpSocket::bind(any).and_then(|s| s.connect(addr).map(|()| s)) {
        Ok(s) => s,
        Err(err) => return format!("error {err}"),
    };
    let _ = socket.set_read_timeout(Some(timeout));
    // A REJECT or DROP in the node's own OUTPUT path fails the send with EPERM; REJECT then
    // still delivers its ICMP error, which the receive below reports as "refused".
    if let Err(err) = socket.send(b"probe")
        && err.kind() != std::io::ErrorKind::PermissionDenied
    {
        return format!("error send: {err}");
    }
    let mut buf = [0u8; 256];
    match socket.recv(&mut buf) {
        Ok(n) => format!("ok {}", String::from_utf8_lossy(&buf[..n]).trim()),
        Err(err) => match err.kind() {
            // A connected UDP socket reports the ICMP port-unreachable of a REJECT this way.
            ErrorKind::ConnectionRefused => "refused".into(),
            ErrorKind::TimedOut | ErrorKind::WouldBlock => "timeout".into(),
            ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => "unreachable".into(),
            _ => format!("error {err}"),
        },
    }
}

fn attempt(addr: SocketAddr, timeout: Duration) -> String {
    use std::io::ErrorKind;
    let stream = match TcpStream::connect_timeout(&addr, timeout) {
        Ok(s) => s,
        Err(err) => {
            return match err.kind() {
                ErrorKind::ConnectionRefused => "refused".into(),
                ErrorKind::TimedOut | ErrorKind::WouldBlock => "timeout".into(),
                ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => "unreachable".into(),
                _ => format!("error {err}"),
            };
        }
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(n) if n > 0 => format!("ok {}", line.trim()),
        Ok(_) => "error empty answer".into(),
        Err(err) => format!("error reading answer: {err}"),
    }
}
