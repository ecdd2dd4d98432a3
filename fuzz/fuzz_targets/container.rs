//! Container reading of arbitrary bytes: the header, table and every
//! metadata record checked on open, then every section read and the CRCs
//! verified. Errors, never panics or huge allocations.
//!
//! Every byte of a container is under a CRC, so nearly every mutation would
//! stop at the first checksum. Before reading, the target therefore repairs
//! what it can: the file length in the header, every payload's CRC in the
//! table, the table's CRC and the header's CRC. Mutations then reach the
//! record decoders and the cross-checks behind the checksums. The first
//! input byte chooses whether to repair (odd) or not (even), so damaged
//! checksums stay covered too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake_format::container::Container;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn put_u32(b: &mut [u8], at: usize, v: u32) -> Option<()> {
    b.get_mut(at..at.checked_add(4)?)?
        .copy_from_slice(&v.to_le_bytes());
    Some(())
}

/// Rewrites the checksums (and the recorded file length) of a container;
/// `None` when the header or table cannot be located.
fn repair(b: &mut Vec<u8>) -> Option<()> {
    let len = u64::try_from(b.len()).ok()?;
    b.get_mut(36..44)?.copy_from_slice(&len.to_le_bytes());
    let header_len = usize::try_from(u32_at(b, 20)?).ok()?;
    let count = usize::try_from(u32_at(b, 24)?).ok()?;
    let table = usize::try_from(u64_at(b, 28)?).ok()?;
    let table_len = count.checked_mul(32)?;
    if table.checked_add(table_len)?.checked_add(4)? == b.len() {
        for i in 0..count {
            let entry = table + 32 * i;
            let offset = usize::try_from(u64_at(b, entry + 8)?).ok()?;
            let length = usize::try_from(u64_at(b, entry + 16)?).ok()?;
            if let Some(payload) = b.get(offset..offset.checked_add(length)?) {
                let crc = crc32fast::hash(payload);
                put_u32(b, entry + 24, crc)?;
            }
        }
        let crc = crc32fast::hash(&b[table..table + table_len]);
        put_u32(b, table + table_len, crc)?;
    }
    let crc = crc32fast::hash(b.get(..header_len.checked_sub(4)?)?);
    put_u32(b, header_len - 4, crc)
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, bytes)) = input.split_first() else {
        return;
    };
    let mut bytes = bytes.to_vec();
    if mode & 1 == 1 {
        let _ = repair(&mut bytes);
    }
    let Ok(mut container) = Container::from_reader(std::io::Cursor::new(bytes)) else {
        return;
    };
    for i in 0..container.sections().len() {
        let _ = container.read_section(i);
    }
    let _ = container.verify();
});
