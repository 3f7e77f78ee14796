//! The framing of a `P.edge.<NODE>` message (`docs/CLUSTER.md`, "Routing"): one text
//! line naming the link and the message, then the body as is (the owner's frame, already
//! serialised once for every member of the room; a kick's [`super::wire::KickBody`];
//! nothing for an `end`):
//!
//! ```text
//! <conn> <gen> <n> <kind> <tag>\n<body>
//! ```
//!
//! `conn` is the edge's connection id, `gen` its attach generation, `n` the link's
//! message counter from 1, `kind` a [`Kind`] (`frame`, `kick`, `end`), `tag` `e<seq>`
//! for an `event`, `t<seq>` for a `your_turn`, `-` otherwise (all decimal). The line
//! replaces NATS headers: a header map costs an allocation per name and value on both
//! sides, and hashing on every look-up, for every relayed frame (issue 13: the cluster's
//! CPU per action). Pure: no I/O.

use super::wire::{Kind, Tag};

/// The line in front of a `P.edge` message's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeLine {
    /// The edge's connection id.
    pub conn: u64,
    /// The edge's attach generation of the link.
    pub gen: u64,
    /// The link's message counter, from 1.
    pub n: u64,
    /// What the message is.
    pub kind: Kind,
    /// The frame's stream tag: [`Tag::Event`], [`Tag::Turn`], or [`Tag::Other`] (a reply's
    /// `req` is read by the edge from the frame itself, never written here).
    pub tag: Tag,
}

/// The longest line [`decode`] looks for (five decimal u64, a kind, separators).
const MAX_LINE: usize = 128;

/// The message for `line` and `body`.
pub fn encode(line: &EdgeLine, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 48);
    let mut number = itoa::Buffer::new();
    for n in [line.conn, line.gen, line.n] {
        out.extend_from_slice(number.format(n).as_bytes());
        out.push(b' ');
    }
    out.extend_from_slice(line.kind.as_str().as_bytes());
    match line.tag {
        Tag::Event(seq) => {
            out.extend_from_slice(b" e");
            out.extend_from_slice(number.format(seq).as_bytes());
        }
        Tag::Turn(seq) => {
            out.extend_from_slice(b" t");
            out.extend_from_slice(number.format(seq).as_bytes());
        }
        Tag::Reply(_) | Tag::Other => out.extend_from_slice(b" -"),
    }
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// Reads message `msg`: its line and its body (`None`: not a `P.edge` message).
pub fn decode(msg: &[u8]) -> Option<(EdgeLine, &[u8])> {
    let end = memchr::memchr(b'\n', &msg[..msg.len().min(MAX_LINE)])?;
    let mut fields = msg[..end].split(|&b| b == b' ');
    let mut number = || decimal(fields.next()?);
    let (conn, gen, n) = (number()?, number()?, number()?);
    let kind = match fields.next()? {
        b"frame" => Kind::Frame,
        b"kick" => Kind::Kick,
        b"end" => Kind::End,
        _ => return None,
    };
    let tag = match fields.next()? {
        b"-" => Tag::Other,
        [b'e', seq @ ..] => Tag::Event(decimal(seq)?),
        [b't', seq @ ..] => Tag::Turn(decimal(seq)?),
        _ => return None,
    };
    if fields.next().is_some() {
        return None;
    }
    let line = EdgeLine {
        conn,
        gen,
        n,
        kind,
        tag,
    };
    Some((line, &msg[end + 1..]))
}

/// A u64 written in decimal digits only (no sign, at least one digit, no overflow).
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: Kind, tag: Tag) -> EdgeLine {
        EdgeLine {
            conn: 17,
            gen: 42,
            n: 3,
            kind,
            tag,
        }
    }

    #[test]
    fn messages_read_back_with_their_body_as_is() {
        let body = br#"{"type":"event","room":"AB","seq":12}"#;
        let msg = encode(&line(Kind::Frame, Tag::Event(12)), body);
        assert_eq!(
            std::str::from_utf8(&msg).expect("text"),
            "17 42 3 frame e12\n{\"type\":\"event\",\"room\":\"AB\",\"seq\":12}"
        );
        assert_eq!(
            decode(&msg),
            Some((line(Kind::Frame, Tag::Event(12)), &body[..]))
        );
        let turn = encode(&line(Kind::Frame, Tag::Turn(u64::MAX)), b"x");
        assert_eq!(
            decode(&turn),
            Some((line(Kind::Frame, Tag::Turn(u64::MAX)), &b"x"[..]))
        );
        let end = encode(&line(Kind::End, Tag::Other), b"");
        assert_eq!(end, b"17 42 3 end -\n");
        assert_eq!(decode(&end), Some((line(Kind::End, Tag::Other), &b""[..])));
        // A body with new lines of its own keeps them.
        let kick = encode(&line(Kind::Kick, Tag::Other), b"a\nb");
        assert_eq!(decode(&kick).map(|(_, b)| b), Some(&b"a\nb"[..]));
    }

    #[test]
    fn a_reply_tag_is_not_written_the_edge_reads_it_from_the_frame() {
        let msg = encode(&line(Kind::Frame, Tag::Reply(9)), b"{}");
        assert_eq!(
            decode(&msg),
            Some((line(Kind::Frame, Tag::Other), &b"{}"[..]))
        );
    }

    #[test]
    fn anything_else_is_not_an_edge_message() {
        for bad in [
            &b""[..],
            b"{\"type\":\"event\"}",
            b"17 42 3 frame e12",
            b"17 42 frame e12\n{}",
            b"17 42 3 fly -\n{}",
            b"17 42 3 frame x12\n{}",
            b"17 42 3 frame e\n{}",
            b"17 42 3 frame e1x\n{}",
            b"17 42 3 frame\n{}",
            b"17 42 3 frame \n{}",
            b"17 42 3 frame - more\n{}",
            b"-1 42 3 frame -\n{}",
            b"17  42 3 frame -\n{}",
            b"+17 42 3 frame -\n{}",
            b"17 42 3 frame e+1\n{}",
            b"18446744073709551616 42 3 frame -\n{}",
        ] {
            assert_eq!(decode(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let long = format!("{}\n{{}}", "1".repeat(200));
        assert_eq!(decode(long.as_bytes()), None);
    }
}
