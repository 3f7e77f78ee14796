//! The framing of a `P.edge.<NODE>` message (`docs/CLUSTER.md`, "Routing"): one or more
//! text lines, each naming a link and its message, then the body as is (the owner's
//! frame, already serialised once for every member of the room; a kick's
//! [`super::wire::KickBody`]; an `end`'s [`super::wire::EndBody`], or nothing from a node
//! of before):
//!
//! ```text
//! <conn> <gen> <n> <kind> <tag>\n[<conn> <gen> <n> frame <tag>\n ...]<body>
//! ```
//!
//! `conn` is the edge's connection id, `gen` its attach generation, `n` the link's
//! message counter from 1, `kind` a [`Kind`] (`frame`, `kick`, `end`), `tag` `e<seq>`
//! for an `event`, `t<seq>` for a `your_turn`, `-` otherwise (all decimal). A line starts
//! with a digit and a body with `{` (a JSON object) or is empty, so the reader takes
//! lines while the next byte is a digit. Several lines share one body: the same frame for
//! several links of one edge node (a broadcast), one NATS message instead of one per
//! socket; only `frame` lines are grouped (a `kick` or an `end` travels alone). A message
//! of one line is what every message was before grouping (issue 13: the cluster's CPU per
//! action). The line replaces NATS headers: a header map costs an allocation per name and
//! value on both sides, and hashing on every look-up, for every relayed frame. Pure: no
//! I/O.

use super::wire::{Kind, Tag};

/// A line in front of a `P.edge` message's body.
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

/// The lines of a message as [`decode`] read them: most messages have one (no allocation).
pub type Lines = smallvec::SmallVec<[EdgeLine; 4]>;

/// The message for `line` and `body` (a body is empty or a JSON object).
pub fn encode(line: &EdgeLine, body: &[u8]) -> Vec<u8> {
    encode_many(std::slice::from_ref(line), body)
}

/// The message carrying `body` for every link of `lines`, in that order: one line each
/// (several lines are `frame` lines only, [`decode`] refuses anything else).
pub fn encode_many(lines: &[EdgeLine], body: &[u8]) -> Vec<u8> {
    debug_assert!(
        body.is_empty() || body[0] == b'{',
        "a body is a JSON object"
    );
    debug_assert!(lines.len() == 1 || lines.iter().all(|l| l.kind == Kind::Frame));
    let mut out = Vec::with_capacity(body.len() + 40 * lines.len());
    let mut number = itoa::Buffer::new();
    for line in lines {
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
    }
    out.extend_from_slice(body);
    out
}

/// Reads message `msg`: its lines (at least one) and its body (`None`: not a `P.edge`
/// message: a line unreadable, none at all, a `kick` or `end` among several lines, or a
/// body that is neither empty nor a JSON object).
pub fn decode(msg: &[u8]) -> Option<(Lines, &[u8])> {
    let mut lines = Lines::new();
    let mut rest = msg;
    while rest.first().is_some_and(u8::is_ascii_digit) {
        let end = memchr::memchr(b'\n', &rest[..rest.len().min(MAX_LINE)])?;
        lines.push(read_line(&rest[..end])?);
        rest = &rest[end + 1..];
    }
    let grouped_ok = lines.len() == 1 || lines.iter().all(|l| l.kind == Kind::Frame);
    let body_ok = rest.first().is_none_or(|&b| b == b'{');
    (!lines.is_empty() && grouped_ok && body_ok).then_some((lines, rest))
}

/// One line without its `\n`.
fn read_line(line: &[u8]) -> Option<EdgeLine> {
    let mut fields = line.split(|&b| b == b' ');
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
    Some(EdgeLine {
        conn,
        gen,
        n,
        kind,
        tag,
    })
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

    fn one(line: EdgeLine) -> Lines {
        Lines::from_slice(&[line])
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
            Some((one(line(Kind::Frame, Tag::Event(12))), &body[..]))
        );
        let turn = encode(&line(Kind::Frame, Tag::Turn(u64::MAX)), b"{}");
        assert_eq!(
            decode(&turn),
            Some((one(line(Kind::Frame, Tag::Turn(u64::MAX))), &b"{}"[..]))
        );
        let end = encode(&line(Kind::End, Tag::Other), b"");
        assert_eq!(end, b"17 42 3 end -\n");
        assert_eq!(
            decode(&end),
            Some((one(line(Kind::End, Tag::Other)), &b""[..]))
        );
        // A body with new lines (and digits after them) of its own keeps them.
        let kick = encode(&line(Kind::Kick, Tag::Other), b"{\"a\":\n1}");
        assert_eq!(decode(&kick).map(|(_, b)| b), Some(&b"{\"a\":\n1}"[..]));
    }

    #[test]
    fn a_reply_tag_is_not_written_the_edge_reads_it_from_the_frame() {
        let msg = encode(&line(Kind::Frame, Tag::Reply(9)), b"{}");
        assert_eq!(
            decode(&msg),
            Some((one(line(Kind::Frame, Tag::Other)), &b"{}"[..]))
        );
    }

    #[test]
    fn several_links_share_one_body_each_with_its_own_line() {
        let lines = [
            EdgeLine {
                conn: 5,
                gen: 1,
                n: 9,
                kind: Kind::Frame,
                tag: Tag::Event(30),
            },
            EdgeLine {
                conn: 6,
                gen: 4,
                n: 2,
                kind: Kind::Frame,
                tag: Tag::Event(30),
            },
            EdgeLine {
                conn: 70,
                gen: 3,
                n: 11,
                kind: Kind::Frame,
                tag: Tag::Other,
            },
        ];
        let body = br#"{"type":"event","room":"AB","seq":30}"#;
        let msg = encode_many(&lines, body);
        assert_eq!(
            std::str::from_utf8(&msg).expect("text"),
            "5 1 9 frame e30\n6 4 2 frame e30\n70 3 11 frame -\n{\"type\":\"event\",\"room\":\"AB\",\"seq\":30}"
        );
        assert_eq!(decode(&msg), Some((Lines::from_slice(&lines), &body[..])));
        // One line is byte for byte the single-link message.
        assert_eq!(encode_many(&lines[..1], body), encode(&lines[0], body));
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

    #[test]
    fn a_message_with_any_bad_part_is_not_read_at_all() {
        for bad in [
            // A good line, then a bad one.
            &b"1 1 1 frame e5\n2 1 x frame e5\n{}"[..],
            b"1 1 1 frame e5\n2 1 1 frame e5 extra\n{}",
            // A good line, then garbage where the body should start.
            b"1 1 1 frame e5\ngarbage",
            b"1 1 1 frame e5\n2 1 1 frame e5\n\n{}",
            b"1 1 1 frame -\n[1,2]",
            b"1 1 1 kick -\n\"closed\"",
            // A good line, then a line without its end.
            b"1 1 1 frame e5\n2 1 1 frame e5",
            // Zero lines: a body alone, or nothing.
            b"{\"type\":\"event\",\"room\":\"AB\",\"seq\":5}",
            b"\n{}",
            // Only frames are grouped: a kick or an end travels alone.
            b"1 1 1 frame e5\n2 1 1 kick -\n{}",
            b"1 1 1 end -\n2 1 1 frame e5\n{}",
            b"1 1 1 end -\n2 1 1 end -\n",
        ] {
            assert_eq!(decode(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
