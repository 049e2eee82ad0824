//! Guarded Arrow IPC readers (stream and file format) for input that may be hostile.
//!
//! arrow's own readers trust a message's header: an out-of-range buffer offset panics
//! inside them, and a body length or a compressed buffer's declared size is allocated as
//! stated, so a few changed bytes abort the process. Here every message is framed by hand
//! (continuation marker, metadata length, then the flatbuffer `Message` verified by
//! `root_as_message`), and before arrow decodes it (with its array validation on):
//! - the metadata length and the body length are bounded (by the bytes left in a file, by
//!   [`MAX_METADATA`], and the body is read incrementally, so its allocation grows only with
//!   bytes that really arrive);
//! - every buffer lies inside the body, every node's counts are non-negative and no larger
//!   than the body could hold, and compressed buffers declare at most [`MAX_DECOMPRESSED`]
//!   bytes in all;
//! - the schema holds the column types of [`readable_type`] only (numbers, booleans,
//!   strings and binaries, also as dictionaries, and structs, lists and maps of them): no
//!   union, run-end or null columns, whose lengths no buffer bounds. Parquet and in-memory
//!   tables carry the same types: one rule for every table input.
//!
//! A panic inside arrow's decoder despite all this is caught and reported as bad input.
//! Message bodies are recycled once arrow drops the last array of theirs ([`Bodies`]).
//! Errors are `Error::Input` naming the file: `FILE: bad Arrow IPC data[ after N rows]: ...`.

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use arrow::array::{ArrayRef, RecordBatch};
use arrow::buffer::Buffer;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::ipc::{self, MessageHeader, MetadataVersion};

use crate::error::{Error, Result, Where};
use crate::io::input::read_error;

/// Largest flatbuffer metadata of one message (schemas with their key-value metadata
/// included); real ones are kilobytes.
pub const MAX_METADATA: usize = 64 << 20;

/// Largest total size the compressed buffers of one message may declare once decompressed.
pub const MAX_DECOMPRESSED: u64 = 2 << 30;

const CONTINUATION: [u8; 4] = [0xff; 4];
const FILE_MAGIC: &[u8; 6] = b"ARROW1";

/// Record batches of an Arrow IPC stream or file, decoded only after the checks above.
pub struct IpcReader {
    place: Where,
    input: Box<dyn Read + Send>,
    /// Bytes the input may still hold (a file's stream part); `None` for a stream of
    /// unknown length.
    remaining: Option<u64>,
    schema: SchemaRef,
    /// The schema batches are decoded with: `schema`, with the columns read as bytes only
    /// turned from strings into binaries of the same layout.
    decode: SchemaRef,
    dictionaries: HashMap<i64, ArrayRef>,
    bodies: Bodies,
    rows: usize,
    done: bool,
}

impl IpcReader {
    /// Reads the Arrow IPC stream format from `input`, starting at its first message.
    pub fn stream(place: Where, input: impl Read + Send + 'static) -> Result<IpcReader> {
        IpcReader::start(place, Box::new(input), None)
    }

    /// Reads the Arrow IPC file format from a regular file (or its bytes, buffered from a
    /// pipe): the stream it embeds between the leading magic and the footer (the footer is
    /// only used to find where that ends).
    pub fn file(place: Where, mut file: impl Read + Seek + Send + 'static) -> Result<IpcReader> {
        let bad = |problem: &str| Error::file(&place, format!("bad Arrow IPC file: {problem}"));
        let size = file.seek(SeekFrom::End(0)).map_err(|e| read_error(&place, e))?;
        if size < 8 + 10 {
            return Err(bad("too short"));
        }
        let mut tail = [0u8; 10];
        file.seek(SeekFrom::End(-10)).map_err(|e| read_error(&place, e))?;
        file.read_exact(&mut tail).map_err(|e| read_error(&place, e))?;
        if &tail[4..] != FILE_MAGIC {
            return Err(bad("no ARROW1 magic at its end (truncated?)"));
        }
        let footer = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let stream_end = u64::try_from(footer).ok().and_then(|f| (size - 10).checked_sub(f));
        let Some(stream_end) = stream_end.filter(|&end| end >= 8) else {
            return Err(bad(&format!("footer length {footer} does not fit a file of {size} bytes")));
        };
        file.seek(SeekFrom::Start(8)).map_err(|e| read_error(&place, e))?;
        let mut input = BufReader::with_capacity(1 << 20, file).take(stream_end - 8);
        // Writers pad the magic with zeros (arrow-rs to 64 bytes); no message starts with a
        // zero word (that is the end-of-stream marker), so zero words here are padding.
        let mut left = stream_end - 8;
        let mut word = [0u8; 4];
        loop {
            if left < 4 {
                return Err(bad("no schema message"));
            }
            input.read_exact(&mut word).map_err(|e| read_error(&place, e))?;
            left -= 4;
            if word != [0; 4] {
                break;
            }
        }
        let input = std::io::Cursor::new(word).chain(input);
        IpcReader::start(place, Box::new(input), Some(left + 4))
    }

    fn start(place: Where, input: Box<dyn Read + Send>, remaining: Option<u64>) -> Result<IpcReader> {
        let mut reader = IpcReader {
            place,
            input,
            remaining,
            schema: Arc::new(Schema::empty()),
            decode: Arc::new(Schema::empty()),
            dictionaries: HashMap::new(),
            bodies: Bodies::default(),
            rows: 0,
            done: false,
        };
        let Some(framed) = reader.next_message()? else {
            return Err(reader.bad("no schema message (empty stream)"));
        };
        let message = ipc::root_as_message(&framed.meta).map_err(|e| reader.bad(&e.to_string()))?;
        let fb = message.header_as_schema().ok_or_else(|| reader.bad("the first message is not a schema"))?;
        let schema = ipc::convert::try_fb_to_schema(fb).map_err(|e| reader.bad(&e.to_string()))?;
        check_schema(&schema).map_err(|p| reader.bad(&p))?;
        reader.schema = Arc::new(schema);
        reader.decode = Arc::clone(&reader.schema);
        Ok(reader)
    }

    /// The schema of the batches handed out.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.decode)
    }

    pub fn place(&self) -> &Where {
        &self.place
    }

    /// Decodes these string columns as binaries (same layout): arrow then skips the UTF-8
    /// validation of every value, a pass over all their bytes, for columns whose values
    /// the caller checks itself (residues) or takes as bytes (ids).
    pub fn decode_as_bytes(&mut self, columns: &[usize]) {
        let fields: Vec<_> = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| match as_binary(f.data_type()).filter(|_| columns.contains(&i)) {
                Some(ty) => Arc::new(f.as_ref().clone().with_data_type(ty)),
                None => Arc::clone(f),
            })
            .collect();
        self.decode = Arc::new(Schema::new_with_metadata(fields, self.schema.metadata().clone()));
    }

    fn bad(&self, problem: &str) -> Error {
        if self.rows == 0 {
            Error::file(&self.place, format!("bad Arrow IPC data: {problem}"))
        } else {
            Error::file(&self.place, format!("bad Arrow IPC data after {} rows: {problem}", self.rows))
        }
    }

    /// Reads exactly `n` bytes, growing the buffer only as bytes arrive.
    fn read_bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(&mut buf, n, what)?;
        Ok(buf)
    }

    /// [`IpcReader::read_bytes`] into `buf` (cleared first), a recycled buffer.
    fn read_into(&mut self, buf: &mut Vec<u8>, n: u64, what: &str) -> Result<()> {
        if self.remaining.is_some_and(|r| n > r) {
            return Err(self.bad(&format!("{what} of {n} bytes runs past the end of the data")));
        }
        // Reserved up front (no regrowth copies) where the size is known to be there or
        // small; otherwise grown only as bytes really arrive.
        buf.clear();
        buf.reserve(if self.remaining.is_some() { n } else { n.min(MAX_METADATA as u64) } as usize);
        (&mut *self.input).take(n).read_to_end(buf).map_err(|e| read_error(&self.place, e))?;
        if (buf.len() as u64) < n {
            return Err(self.bad(&format!("truncated: {what} of {n} bytes, only {} there", buf.len())));
        }
        if let Some(r) = &mut self.remaining {
            *r -= n;
        }
        Ok(())
    }

    /// The next message, checked, with its body; `None` at the end-of-stream marker or at a
    /// clean end of input.
    fn next_message(&mut self) -> Result<Option<Framed>> {
        let mut word = Vec::new();
        (&mut self.input).take(4).read_to_end(&mut word).map_err(|e| read_error(&self.place, e))?;
        if word.is_empty() {
            return Ok(None); // no end-of-stream marker: arrow accepts this too
        }
        if word.len() < 4 {
            return Err(self.bad("truncated message length"));
        }
        if let Some(r) = &mut self.remaining {
            *r = r.saturating_sub(4);
        }
        if word == CONTINUATION {
            word = self.read_bytes(4, "message length")?;
        }
        let len = i32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        if len == 0 {
            return Ok(None); // end-of-stream marker
        }
        let len = usize::try_from(len).map_err(|_| self.bad(&format!("negative message length {len}")))?;
        if len > MAX_METADATA {
            return Err(self.bad(&format!("message metadata of {len} bytes (at most {MAX_METADATA})")));
        }
        let meta = self.read_bytes(len as u64, "message metadata")?;
        let message = ipc::root_as_message(&meta).map_err(|e| self.bad(&format!("invalid message: {e}")))?;
        if message.version() < MetadataVersion::V4 {
            return Err(self.bad(&format!("unsupported metadata version {:?}", message.version())));
        }
        let body_len = u64::try_from(message.bodyLength())
            .map_err(|_| self.bad(&format!("negative body length {}", message.bodyLength())))?;
        // A batch with the types of its columns: the schema's, or a dictionary's values.
        let data = match message.header_type() {
            MessageHeader::Schema => None,
            MessageHeader::RecordBatch => {
                let batch = message.header_as_record_batch().ok_or_else(|| self.bad("record batch header missing"))?;
                Some((batch, self.schema.fields().iter().map(|f| f.data_type().clone()).collect::<Vec<_>>()))
            }
            MessageHeader::DictionaryBatch => {
                let dict = message.header_as_dictionary_batch().ok_or_else(|| self.bad("dictionary header missing"))?;
                let batch = dict.data().ok_or_else(|| self.bad("dictionary batch without data"))?;
                #[allow(deprecated)] // arrow's IPC reader still matches dictionaries by this id
                let value: Option<DataType> =
                    self.schema.fields().iter().find(|f| f.dict_id() == Some(dict.id())).and_then(|f| {
                        match f.data_type() {
                            DataType::Dictionary(_, value) => Some((**value).clone()),
                            _ => None,
                        }
                    });
                let value = value.ok_or_else(|| self.bad(&format!("dictionary {} has no column", dict.id())))?;
                Some((batch, vec![value]))
            }
            other => return Err(self.bad(&format!("unexpected message type {other:?}"))),
        };
        if let Some((batch, _)) = &data {
            check_batch(batch, body_len).map_err(|p| self.bad(&p))?;
        }
        let mut body = self.bodies.take();
        self.read_into(&mut body, body_len, "message body")?;
        if let Some((batch, types)) = &data {
            check_compressed_sizes(batch, &body).map_err(|p| self.bad(&p))?;
            check_widths(batch, &body, types).map_err(|p| self.bad(&p))?;
        }
        Ok(Some(Framed { meta, body: self.bodies.buffer(body) }))
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            let Some(framed) = self.next_message()? else { return Ok(None) };
            // Verified in `next_message`; verifying again is cheap (metadata only).
            let message = ipc::root_as_message(&framed.meta).map_err(|e| self.bad(&e.to_string()))?;
            let version = message.version();
            let schema = Arc::clone(&self.decode);
            let dictionaries = &mut self.dictionaries;
            let body = &framed.body;
            let decoded = guard(|| -> std::result::Result<Option<RecordBatch>, arrow::error::ArrowError> {
                if let Some(dict) = message.header_as_dictionary_batch() {
                    ipc::reader::read_dictionary(body, dict, &schema, dictionaries, &version)?;
                    Ok(None)
                } else if let Some(batch) = message.header_as_record_batch() {
                    ipc::reader::read_record_batch(body, batch, schema, dictionaries, None, &version).map(Some)
                } else {
                    Err(arrow::error::ArrowError::IpcError("a second schema message".into()))
                }
            });
            match decoded {
                Ok(Ok(Some(batch))) => return Ok(Some(batch)),
                Ok(Ok(None)) => continue,
                Ok(Err(e)) => return Err(self.bad(&e.to_string())),
                Err(panic) => return Err(self.bad(&format!("the decoder failed ({panic})"))),
            }
        }
    }
}

impl Iterator for IpcReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(Some(batch)) => {
                self.rows += batch.num_rows();
                Some(Ok(batch))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Message bodies to reuse. A stream's bodies are large (a batch of pairs is tens of MB), and
/// fresh ones cost as much as reading them: every page faulted in and zeroed, then unmapped
/// (measured: half the reading thread's time through a pipe). A body's buffer comes back
/// here when arrow drops the last array that points into it, wherever that happens.
#[derive(Clone, Default)]
struct Bodies(Arc<Mutex<Vec<Vec<u8>>>>);

/// Bodies kept for reuse at most: those of the few batches in flight.
const KEEP_BODIES: usize = 4;

impl Bodies {
    fn take(&self) -> Vec<u8> {
        self.0.lock().ok().and_then(|mut kept| kept.pop()).unwrap_or_default()
    }

    /// `bytes` as an arrow buffer that hands them back on its last drop.
    fn buffer(&self, bytes: Vec<u8>) -> Buffer {
        let (ptr, len) = (NonNull::new(bytes.as_ptr().cast_mut()).expect("a Vec's pointer is not null"), bytes.len());
        let owner = Arc::new(Body { bytes, home: self.clone() });
        // SAFETY: `ptr` points at the `len` initialized bytes of the Vec's heap buffer, which
        // `owner` keeps alive, unchanged and in place (moving a Vec does not move its buffer)
        // until arrow drops its last reference to it.
        unsafe { Buffer::from_custom_allocation(ptr, len, owner) }
    }
}

struct Body {
    bytes: Vec<u8>,
    home: Bodies,
}

impl Drop for Body {
    fn drop(&mut self) {
        if let Ok(mut kept) = self.home.0.lock() {
            if kept.len() < KEEP_BODIES {
                kept.push(std::mem::take(&mut self.bytes));
            }
        }
    }
}

/// One message that passed the checks: its verified metadata and its body.
struct Framed {
    meta: Vec<u8>,
    body: Buffer,
}

/// Runs arrow's decoder, turning a panic into its message: the last line of defence, for
/// inputs the checks did not foresee. The panic still prints (it is a swarrow bug: a check
/// is missing).
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`guard`] for a third-party decoder whose input swarrow cannot check beforehand (parquet):
/// its panics on corrupt data become errors without a panic message on stderr.
pub(crate) fn guard_quiet<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let result = guard(f);
    QUIET.with(|q| q.set(was));
    result
}

/// The binary type of a string type's layout (dictionary values too); `None` for others.
fn as_binary(ty: &DataType) -> Option<DataType> {
    match ty {
        DataType::Utf8 => Some(DataType::Binary),
        DataType::LargeUtf8 => Some(DataType::LargeBinary),
        DataType::Utf8View => Some(DataType::BinaryView),
        DataType::Dictionary(key, value) => as_binary(value).map(|v| DataType::Dictionary(key.clone(), Box::new(v))),
        _ => None,
    }
}

/// Columns of [`readable_type`] only.
fn check_schema(schema: &Schema) -> std::result::Result<(), String> {
    if schema.fields().is_empty() {
        return Err("the schema has no columns".into());
    }
    for field in schema.fields() {
        if !readable_type(field.data_type()) {
            return Err(not_readable(field.name(), field.data_type()));
        }
    }
    Ok(())
}

/// The types of the columns swarrow reads and carries through, from every table input
/// alike (Arrow IPC, Parquet, tables handed over in memory): numbers, booleans, strings and
/// binaries, dictionaries of them, and structs, lists and maps of such values (dictionaries
/// only at the top). Not null, union or run-end encoded columns: their lengths are bounded
/// by no buffer, so a hostile Arrow stream could declare any.
pub(crate) fn readable_type(ty: &DataType) -> bool {
    match ty {
        DataType::Dictionary(key, value) => key.is_dictionary_key_type() && flat(value),
        other => value_type(other),
    }
}

/// Why a column of type `ty` is refused.
pub(crate) fn not_readable(name: &str, ty: &DataType) -> String {
    format!(
        "column {name} has type {ty}, which swarrow does not read (it reads numbers, booleans, strings, \
         binaries, dictionaries of them, and structs, lists and maps of such values)"
    )
}

fn value_type(ty: &DataType) -> bool {
    match ty {
        DataType::Struct(fields) => fields.iter().all(|f| value_type(f.data_type())),
        DataType::List(child) | DataType::LargeList(child) | DataType::Map(child, _) => value_type(child.data_type()),
        DataType::FixedSizeList(child, size) => *size > 0 && value_type(child.data_type()),
        other => flat(other),
    }
}

fn flat(ty: &DataType) -> bool {
    match ty {
        DataType::FixedSizeBinary(width) => *width > 0,
        DataType::Boolean
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => true,
        other => other.is_primitive(),
    }
}

/// Every buffer inside the body, every count sane, compressed sizes bounded.
fn check_batch(batch: &ipc::RecordBatch, body_len: u64) -> std::result::Result<(), String> {
    // No flat column has more rows than 8 per body byte (booleans pack 8 to a byte).
    let max_rows = body_len.saturating_mul(8).saturating_add(8);
    let rows = u64::try_from(batch.length()).map_err(|_| format!("negative row count {}", batch.length()))?;
    if rows > max_rows {
        return Err(format!("{rows} rows cannot fit in a body of {body_len} bytes"));
    }
    let buffers = batch.buffers().ok_or("record batch without buffers")?;
    for (i, b) in buffers.iter().enumerate() {
        let (offset, length) = (b.offset(), b.length());
        let end = u64::try_from(offset).ok().zip(u64::try_from(length).ok()).and_then(|(o, l)| o.checked_add(l));
        if end.is_none_or(|end| end > body_len) {
            return Err(format!(
                "buffer {i} (offset {offset}, length {length}) lies outside the body of {body_len} bytes"
            ));
        }
    }
    for (i, node) in batch.nodes().ok_or("record batch without field nodes")?.iter().enumerate() {
        let (length, nulls) = (node.length(), node.null_count());
        let fits = u64::try_from(length).is_ok_and(|l| l <= max_rows);
        if !fits || nulls < 0 || nulls > length {
            return Err(format!("field node {i} has length {length} and null count {nulls}"));
        }
    }
    if let Some(counts) = batch.variadicBufferCounts() {
        if counts.iter().any(|c| c < 0 || c as usize > buffers.len()) {
            return Err("invalid variadic buffer counts".into());
        }
    }
    Ok(())
}

/// Each compressed buffer starts with its uncompressed length (-1: stored as is), which the
/// decoder allocates: the total must stay under [`MAX_DECOMPRESSED`].
fn check_compressed_sizes(batch: &ipc::RecordBatch, body: &[u8]) -> std::result::Result<(), String> {
    if batch.compression().is_none() {
        return Ok(());
    }
    let mut total: u64 = 0;
    for (i, b) in batch.buffers().into_iter().flatten().enumerate() {
        // Inside the body: checked by `check_batch`.
        let (offset, length) = (b.offset() as usize, b.length() as usize);
        if length == 0 {
            continue;
        }
        let Some(prefix) = body.get(offset..offset + 8).filter(|_| length >= 8) else {
            return Err(format!("compressed buffer {i} is shorter than its length prefix"));
        };
        let declared = i64::from_le_bytes(prefix.try_into().expect("8 bytes"));
        if declared == -1 {
            continue;
        }
        let declared =
            u64::try_from(declared).map_err(|_| format!("compressed buffer {i} declares {declared} bytes"))?;
        total = total.saturating_add(declared);
        if total > MAX_DECOMPRESSED {
            return Err(format!("compressed buffers declare more than {MAX_DECOMPRESSED} bytes"));
        }
    }
    Ok(())
}

/// Buffers of fixed-width elements (offsets, values, views, dictionary keys) hold a whole
/// number of elements (arrow's validation asserts it, panicking): appends to `widths` the
/// element width of each buffer of a column, its children's after its own (IPC order),
/// `None` where any length will do; false when `variadic` (the view columns' extra buffer
/// counts, in order) runs out, which arrow reports.
fn buffer_widths(ty: &DataType, widths: &mut Vec<Option<usize>>, variadic: &mut impl Iterator<Item = i64>) -> bool {
    match ty {
        DataType::Utf8 | DataType::Binary => widths.extend([None, Some(4), None]),
        DataType::LargeUtf8 | DataType::LargeBinary => widths.extend([None, Some(8), None]),
        DataType::Utf8View | DataType::BinaryView => {
            let Some(extra) = variadic.next() else { return false };
            widths.extend([None, Some(16)]);
            widths.extend((0..extra.max(0)).map(|_| None));
        }
        DataType::Dictionary(key, _) => widths.extend([None, key.primitive_width()]),
        DataType::Boolean | DataType::FixedSizeBinary(_) => widths.extend([None, None]),
        DataType::Struct(fields) => {
            widths.push(None);
            return fields.iter().all(|f| buffer_widths(f.data_type(), widths, variadic));
        }
        DataType::List(child) | DataType::Map(child, _) => {
            widths.extend([None, Some(4)]);
            return buffer_widths(child.data_type(), widths, variadic);
        }
        DataType::LargeList(child) => {
            widths.extend([None, Some(8)]);
            return buffer_widths(child.data_type(), widths, variadic);
        }
        DataType::FixedSizeList(child, _) => {
            widths.push(None);
            return buffer_widths(child.data_type(), widths, variadic);
        }
        other => widths.extend([None, other.primitive_width()]),
    }
    true
}

fn check_widths(batch: &ipc::RecordBatch, body: &[u8], types: &[DataType]) -> std::result::Result<(), String> {
    let Some(buffers) = batch.buffers() else { return Ok(()) };
    let compressed = batch.compression().is_some();
    let mut variadic = batch.variadicBufferCounts().into_iter().flatten();
    let mut next = 0usize;
    for ty in types {
        let mut widths = Vec::new();
        if !buffer_widths(ty, &mut widths, &mut variadic) {
            return Ok(()); // arrow reports it
        }
        for width in widths {
            if next >= buffers.len() {
                return Ok(()); // too few buffers: arrow reports it
            }
            let b = buffers.get(next);
            next += 1;
            let Some(width) = width.filter(|&w| w > 1) else { continue };
            // Inside the body and, when compressed, with a prefix: checked before.
            let (offset, length) = (b.offset() as usize, b.length() as usize);
            let bytes = if compressed && length > 0 {
                match i64::from_le_bytes(body[offset..offset + 8].try_into().expect("8 bytes")) {
                    -1 => length - 8,
                    declared => declared as usize,
                }
            } else {
                length
            };
            if bytes % width != 0 {
                return Err(format!(
                    "buffer {} of {} bytes does not hold whole {}-byte elements",
                    next - 1,
                    bytes,
                    width
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int32Array, ListArray, StringArray};
    use arrow::datatypes::{Field, Int32Type};
    use arrow::ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};

    fn batch() -> RecordBatch {
        let schema =
            Schema::new(vec![Field::new("id", DataType::Utf8, false), Field::new("n", DataType::Int32, false)]);
        let ids: ArrayRef = Arc::new(StringArray::from(vec!["a", "bb", "ccc"]));
        let ns: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        RecordBatch::try_new(Arc::new(schema), vec![ids, ns]).unwrap()
    }

    fn stream(b: &RecordBatch, options: IpcWriteOptions) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = StreamWriter::try_new_with_options(&mut out, &b.schema(), options).unwrap();
        w.write(b).unwrap();
        w.write(b).unwrap();
        w.finish().unwrap();
        drop(w);
        out
    }

    fn read(data: Vec<u8>) -> Result<Vec<RecordBatch>> {
        IpcReader::stream(Where::Stdin, std::io::Cursor::new(data))?.collect()
    }

    #[test]
    fn streams_and_files_read_back() {
        let b = batch();
        assert_eq!(read(stream(&b, IpcWriteOptions::default())).unwrap(), vec![b.clone(), b.clone()]);
        let zstd = IpcWriteOptions::default().try_with_compression(Some(ipc::CompressionType::ZSTD)).unwrap();
        assert_eq!(read(stream(&b, zstd)).unwrap(), vec![b.clone(), b.clone()]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.arrow");
        let mut w = FileWriter::try_new(std::fs::File::create(&path).unwrap(), &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        drop(w);
        let r = IpcReader::file(Where::Path(path.clone()), std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(r.collect::<Result<Vec<_>>>().unwrap(), vec![b]);
    }

    #[test]
    fn recycled_bodies_never_change_a_batch_still_held() {
        // Batches of different sizes and values: each read either dropped before the next
        // (its body reused) or held to the end (its body must stay as it was).
        let batch = |n: usize| {
            let schema = Schema::new(vec![Field::new("s", DataType::Utf8, false)]);
            let values: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("{n}-{i}"))));
            RecordBatch::try_new(Arc::new(schema), vec![values]).unwrap()
        };
        let want: Vec<RecordBatch> = [5, 300, 1, 40, 7, 2000, 3].into_iter().map(batch).collect();
        let mut out = Vec::new();
        let mut w = StreamWriter::try_new(&mut out, &want[0].schema()).unwrap();
        for b in &want {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        let mut held = Vec::new();
        for (i, got) in IpcReader::stream(Where::Stdin, std::io::Cursor::new(out)).unwrap().enumerate() {
            let got = got.unwrap();
            assert_eq!(got, want[i]);
            if i % 2 == 0 {
                held.push((i, got));
            }
        }
        for (i, got) in held {
            assert_eq!(got, want[i]);
        }
    }

    #[test]
    fn compressed_sizes_beyond_the_cap_are_refused() {
        let b = batch();
        let zstd = IpcWriteOptions::default().try_with_compression(Some(ipc::CompressionType::ZSTD)).unwrap();
        let mut data = stream(&b, zstd);
        // The first message after the schema: patch every buffer's length prefix to 1 TiB.
        let schema_len = 8 + i32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
        let meta_len = i32::from_le_bytes(data[schema_len + 4..schema_len + 8].try_into().unwrap()) as usize;
        let body = schema_len + 8 + meta_len;
        let message = ipc::root_as_message(&data[schema_len + 8..body]).unwrap();
        let buffers: Vec<(usize, usize)> = message
            .header_as_record_batch()
            .unwrap()
            .buffers()
            .unwrap()
            .iter()
            .map(|b| (b.offset() as usize, b.length() as usize))
            .collect();
        for (offset, length) in buffers {
            if length >= 8 {
                data[body + offset..body + offset + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
            }
        }
        let msg = read(data).unwrap_err().to_string();
        assert!(msg.contains("compressed buffers declare more than"), "{}", msg);
    }

    // Found by fuzzing: an offsets buffer one byte short of whole i32s made arrow's
    // validation panic on an alignment assertion.
    #[test]
    fn buffers_of_partial_elements_are_refused() {
        let mut data = stream(&batch(), IpcWriteOptions::default());
        let schema_len = 8 + i32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
        let meta_len = i32::from_le_bytes(data[schema_len + 4..schema_len + 8].try_into().unwrap()) as usize;
        let meta = schema_len + 8..schema_len + 8 + meta_len;
        let message = ipc::root_as_message(&data[meta.clone()]).unwrap();
        // Buffer 1 is the offsets of column `id`: 4 offsets of 4 bytes.
        let offsets = message.header_as_record_batch().unwrap().buffers().unwrap().get(1);
        assert_eq!(offsets.length(), 16);
        let mut entry = offsets.offset().to_le_bytes().to_vec();
        entry.extend(16i64.to_le_bytes());
        let at = meta.start + data[meta.clone()].windows(16).position(|w| w == entry).unwrap();
        data[at + 8..at + 16].copy_from_slice(&15i64.to_le_bytes());
        let msg = read(data).unwrap_err().to_string();
        assert!(msg.contains("buffer 1 of 15 bytes does not hold whole 4-byte elements"), "{}", msg);
    }

    #[test]
    fn nested_columns_read_and_null_columns_and_empty_schemas_are_refused() {
        // Structs and lists of flat values read as Parquet reads them (one rule for both).
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), None]), None]);
        let names = StringArray::from(vec![Some("a"), None]);
        let inner = arrow::array::StructArray::from(vec![
            (Arc::new(Field::new("name", DataType::Utf8, true)), Arc::new(names) as ArrayRef),
            (Arc::new(Field::new("list", list.data_type().clone(), true)), Arc::new(list.clone()) as ArrayRef),
        ]);
        let schema = Schema::new(vec![
            Field::new("l", list.data_type().clone(), true),
            Field::new("s", inner.data_type().clone(), false),
        ]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(list), Arc::new(inner)]).unwrap();
        assert_eq!(read(stream(&b, IpcWriteOptions::default())).unwrap(), vec![b.clone(), b]);
        let nulls = arrow::array::NullArray::new(2);
        let schema = Schema::new(vec![Field::new("z", DataType::Null, true)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(nulls)]).unwrap();
        let msg = read(stream(&b, IpcWriteOptions::default())).unwrap_err().to_string();
        assert!(msg.contains("column z has type Null, which swarrow does not read"), "{}", msg);
        assert!(read(Vec::new()).unwrap_err().to_string().contains("no schema message"));
    }
}
