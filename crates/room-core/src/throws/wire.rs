//! The byte-level pieces of the packed game log: LEB128 varints, zigzag for signed
//! values, colours as one byte, and a bounded reader that names what it was reading
//! when the bytes ran out.

use super::DecodeError;
use parchis_engine::Colour;

/// Appends `v` as an unsigned LEB128 varint (1 byte below 128, at most 10).
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded (small magnitudes of either sign take one byte).
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Reads a packed log from the front; every read is bounded by the bytes left.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    /// The offset of the next byte (for error messages).
    pub fn offset(&self) -> usize {
        self.at
    }

    fn short(&self, what: &'static str) -> DecodeError {
        DecodeError::Truncated {
            offset: self.at,
            what,
        }
    }

    /// One byte.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] at the end.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| self.short(what))?;
        self.at += 1;
        Ok(b)
    }

    /// `n` bytes.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] if fewer are left.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or_else(|| self.short(what))?;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| self.short(what))?;
        self.at = end;
        Ok(slice)
    }

    /// An unsigned varint.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`], or [`DecodeError::Bad`] for one longer than 64 bits.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8(what)?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::Bad {
            offset: self.at,
            message: format!("{what}: varint longer than 64 bits"),
        })
    }

    /// A zigzag varint.
    ///
    /// # Errors
    /// As [`Reader::u64`].
    pub fn i64(&mut self, what: &'static str) -> Result<i64, DecodeError> {
        let z = self.u64(what)?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A length-prefixed byte string.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] if the length runs past the end.
    pub fn bytes(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let n = self.u64(what)?;
        let n = usize::try_from(n).map_err(|_| self.short(what))?;
        self.take(n, what)
    }

    /// A colour (its board index, 0..=3).
    ///
    /// # Errors
    /// [`DecodeError::Bad`] for an index above 3.
    pub fn colour(&mut self, what: &'static str) -> Result<Colour, DecodeError> {
        let k = self.u8(what)?;
        Colour::from_index(usize::from(k)).ok_or(DecodeError::Bad {
            offset: self.at,
            message: format!("{what}: colour index {k}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_their_edges_and_small_values_take_one_byte() {
        let values = [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let signed = [0i64, -1, 1, -64, 63, -65, 64, i64::MIN, i64::MAX];
        let mut out = Vec::new();
        for v in values {
            put_u64(&mut out, v);
        }
        for v in signed {
            put_i64(&mut out, v);
        }
        let mut r = Reader::new(&out);
        for v in values {
            assert_eq!(r.u64("u").expect("reads"), v);
        }
        for v in signed {
            assert_eq!(r.i64("i").expect("reads"), v);
        }
        assert!(r.is_done());
        let mut one = Vec::new();
        put_i64(&mut one, -64);
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn a_short_or_overlong_input_is_an_error_not_a_panic() {
        assert!(matches!(
            Reader::new(&[0x80]).u64("seq"),
            Err(DecodeError::Truncated { what: "seq", .. })
        ));
        assert!(matches!(
            Reader::new(&[0xff; 11]).u64("seq"),
            Err(DecodeError::Bad { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x05, 1, 2]).bytes("json"),
            Err(DecodeError::Truncated { what: "json", .. })
        ));
        assert!(matches!(
            Reader::new(&[4]).colour("c"),
            Err(DecodeError::Bad { .. })
        ));
    }
}
