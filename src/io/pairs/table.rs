//! Pair tables: an Arrow IPC stream or file, or a Parquet file, read record batch by record
//! batch. The pair columns are found by name (`--query-col` and friends); every other
//! column, or those `--carry` names, travels through to the output beside the results, so
//! they join back to the table they came from. A carried column whose name is one of the
//! output's own columns is renamed `input_<name>`.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, LargeBinaryArray, LargeStringArray, RecordBatch,
    StringArray, StringViewArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::{append_pairs, fused, BatchLimits, Counter, Fields, PairColumns, PairReader, Source};
use crate::error::{Error, Result, Where};
use crate::io::input::{peek, read_error, Head, Input, ARROW_CONTINUATION, ARROW_FILE_MAGIC, PARQUET_MAGIC};
use crate::io::ipc::IpcReader;
use crate::io::parquet;
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch};

pub use crate::io::parquet::Batches;

/// A table that is no file: record batches another library hands over (the Python package
/// imports them through the Arrow C stream interface, without copying), read as the pair,
/// candidate and sequence-set tables of files are.
pub struct Table {
    /// The table's name in messages, where a file's path would be.
    pub place: Where,
    pub schema: SchemaRef,
    pub batches: Batches,
}

impl Table {
    /// The batches of `reader`, named `name` in messages.
    pub fn from_reader(name: &str, reader: impl arrow::record_batch::RecordBatchReader + Send + 'static) -> Table {
        let place = Where::Named(name.to_string());
        let schema = reader.schema();
        let named = place.clone();
        let batches = reader.map(move |b| b.map_err(|e| Error::file(&named, format!("bad Arrow data: {e}"))));
        Table { place, schema, batches: Box::new(batches) }
    }
}

/// Opens a pair table when the input's first bytes say it is one; otherwise hands the
/// (decompressed) input back.
pub(super) fn open(
    raw: Head,
    alphabet: Alphabet,
    columns: &PairColumns,
    limits: BatchLimits,
) -> Result<std::result::Result<Box<dyn PairReader>, Input>> {
    let place = raw.place.clone();
    let project = |place: &Where, schema: &Schema| {
        let pair = pair_indices(place, schema, columns)?;
        Wanted::new(&pair, carried_indices(place, schema, columns, &pair)?)
    };
    match open_table(raw, &project)? {
        Ok((schema, batches)) => Ok(Ok(fused(TablePairs::new(place, schema, batches, alphabet, columns, limits)?))),
        Err(input) => Ok(Err(input)),
    }
}

/// The record batches of a table (Arrow IPC stream or file, Parquet) when the input's first
/// bytes say it is one; otherwise the (decompressed) input, handed back. The formats with an
/// index at their end (Arrow IPC file, Parquet) are read from the file itself; through a
/// pipe or gzip they are buffered whole. `project` names the top-level columns Parquet
/// decodes (Arrow streams decode every column) and those read as bytes.
pub(super) fn open_table(raw: Head, project: Project<'_>) -> Result<std::result::Result<(SchemaRef, Batches), Input>> {
    let place = raw.place.clone();
    let (schema, batches): (SchemaRef, Batches) = if raw.bytes.starts_with(ARROW_FILE_MAGIC) && raw.is_regular_file() {
        let file = raw.into_regular_file()?.ok_or_else(|| Error::Internal("regular file gone".into()))?;
        ipc_batches(IpcReader::file(place.clone(), file)?, project)?
    } else if raw.bytes.starts_with(PARQUET_MAGIC) && raw.is_regular_file() {
        let file = raw.into_regular_file()?.ok_or_else(|| Error::Internal("regular file gone".into()))?;
        parquet_batches(&place, parquet::Source::File(Arc::new(file)), project)?
    } else {
        let (head, mut input) = peek(&place, raw.into_input()?, 8)?;
        if head.starts_with(&ARROW_CONTINUATION) {
            ipc_batches(IpcReader::stream(place.clone(), input)?, project)?
        } else if head.starts_with(ARROW_FILE_MAGIC) {
            // As Parquet: its index is at its end, so a pipe's copy is buffered whole.
            let mut all = Vec::new();
            input.read_to_end(&mut all).map_err(|e| read_error(&place, e))?;
            ipc_batches(IpcReader::file(place.clone(), std::io::Cursor::new(all))?, project)?
        } else if head.starts_with(PARQUET_MAGIC) {
            let mut all = Vec::new();
            input.read_to_end(&mut all).map_err(|e| read_error(&place, e))?;
            parquet_batches(&place, parquet::Source::Bytes(all.into()), project)?
        } else {
            return Ok(Err(input));
        }
    };
    Ok(Ok((schema, batches)))
}

/// Which top-level columns of a table's schema a reader needs (errors name what is missing).
pub(super) type Project<'a> = &'a dyn Fn(&Where, &Schema) -> Result<Wanted>;

/// The top-level columns a reader decodes, and of those the ones it reads as bytes only
/// (pair, id and sequence columns: residues are checked by the alphabet, ids taken as they
/// are), which an Arrow stream decodes as binary, without a pass over every string to
/// validate its UTF-8. Carried columns keep their types.
pub(super) struct Wanted {
    pub columns: Vec<usize>,
    pub bytes: Vec<usize>,
    /// Of `bytes`, those a Parquet file decodes as views into its pages (sequences: long
    /// values, not copied); short ids are faster copied (pairs by id from Parquet: 9.82 s
    /// with views against 5.85 s without, 20M candidates on the H100).
    pub views: Vec<usize>,
}

impl Wanted {
    pub(super) fn new(read: &[usize], carried: Vec<usize>) -> Result<Wanted> {
        let bytes: Vec<usize> = read.iter().copied().filter(|i| !carried.contains(i)).collect();
        let mut columns: Vec<usize> = read.iter().copied().chain(carried).collect();
        columns.sort_unstable();
        columns.dedup();
        Ok(Wanted { columns, views: bytes.clone(), bytes })
    }

    /// The same columns, none decoded as views (id columns only).
    pub(super) fn without_views(self) -> Wanted {
        Wanted { views: Vec::new(), ..self }
    }
}

fn ipc_batches(mut reader: IpcReader, project: Project<'_>) -> Result<(SchemaRef, Batches)> {
    let wanted = project(reader.place(), &reader.schema())?;
    reader.decode_as_bytes(&wanted.bytes);
    Ok((reader.schema(), ahead(reader.place().clone(), Box::new(reader))))
}

/// `batches` read and decoded on their own thread, one batch ahead of the consumer: reading
/// an Arrow stream (from a pipe, a copy of every byte) and decoding it overlap with encoding
/// the pairs, instead of taking turns on the consumer's thread. Parquet decodes ahead on
/// threads of its own.
fn ahead(place: Where, batches: Batches) -> Batches {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    crate::threads::spawn("sw-table-read", move || {
        for batch in batches {
            let failed = batch.is_err();
            if tx.send(Some(batch)).is_err() || failed {
                return;
            }
        }
        let _ = tx.send(None);
    });
    // A thread gone without its end marker panicked: no quiet end of the input then.
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let item = rx
            .recv()
            .unwrap_or_else(|_| Some(Err(Error::Internal(format!("{place}: the Arrow reading thread stopped")))));
        done = !matches!(item, Some(Ok(_)));
        item
    }))
}

fn parquet_batches(place: &Where, source: parquet::Source, project: Project<'_>) -> Result<(SchemaRef, Batches)> {
    let (schema, batches) =
        parquet::batches(place, source, &|schema| project(place, schema).map(|w| (w.columns, w.views)))?;
    Ok((schema, batches))
}

fn pair_indices(place: &Where, schema: &Schema, columns: &PairColumns) -> Result<[usize; 4]> {
    let found = string_columns(
        place,
        schema,
        &columns.names,
        "pair input needs",
        "--query-col, --target-col, --query-id-col, --target-id-col",
    )?;
    Ok([found[0], found[1], found[2], found[3]])
}

/// The indices of the string columns `names`; a missing one is named with what the input
/// has (`needs`: who needs them; `options`: the options that name others).
pub(super) fn string_columns(
    place: &Where,
    schema: &Schema,
    names: &[String],
    needs: &str,
    options: &str,
) -> Result<Vec<usize>> {
    let mut found = vec![0usize; names.len()];
    let mut missing = Vec::new();
    for (slot, name) in found.iter_mut().zip(names) {
        match schema.index_of(name) {
            Ok(i) => {
                let same = schema.fields().iter().filter(|f| f.name() == name).count();
                if same > 1 {
                    return Err(Error::file(
                        place,
                        format!("{same} columns are named {name}: which one to read is ambiguous (rename them apart)"),
                    ));
                }
                let ty = schema.field(i).data_type();
                if !StrColumn::readable(ty) {
                    return Err(Error::file(
                        place,
                        format!(
                            "column {name} has type {ty}, expected a string or binary column \
                             (utf8, large_utf8, binary, large_binary, or a dictionary of them)"
                        ),
                    ));
                }
                *slot = i;
            }
            Err(_) => missing.push(name.as_str()),
        }
    }
    if !missing.is_empty() {
        let available: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        return Err(Error::file(
            place,
            format!(
                "missing column{} {} ({needs} {}; it has {}; name others with {options})",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", "),
                names.join(", "),
                available.join(", ")
            ),
        ));
    }
    Ok(found)
}

pub(super) fn carried_indices(
    place: &Where,
    schema: &Schema,
    columns: &PairColumns,
    pair: &[usize],
) -> Result<Vec<usize>> {
    match &columns.carry {
        None => Ok((0..schema.fields().len()).filter(|i| !pair.contains(i)).collect()),
        Some(names) => names
            .iter()
            .map(|name| {
                schema.index_of(name).map_err(|_| {
                    Error::file(
                        place,
                        format!(
                            "--carry: no column '{}' in the input",
                            if name.is_empty() { String::new() } else { crate::error::shown_id(name) }
                        ),
                    )
                })
            })
            .collect(),
    }
}

/// The carried columns as the output names them: a name any result column has (whatever
/// `--columns` chooses) gets the `input_` prefix, and a clash that remains is an error.
pub(super) fn carried_schema(place: &Where, schema: &Schema, carried: &[usize]) -> Result<SchemaRef> {
    let taken = crate::output::columns::is_column_name;
    let mut fields: Vec<Field> = Vec::with_capacity(carried.len());
    for &i in carried {
        let field = schema.field(i);
        // The types an Arrow IPC input may hold, for Parquet and in-memory tables too.
        if !crate::io::ipc::readable_type(field.data_type()) {
            let problem = crate::io::ipc::not_readable(field.name(), field.data_type());
            return Err(Error::file(place, format!("{problem}; leave it out with --carry")));
        }
        let name = if taken(field.name()) { format!("input_{}", field.name()) } else { field.name().clone() };
        if taken(&name) || fields.iter().any(|f| f.name() == &name) {
            return Err(Error::file(
                place,
                format!("carried column {} would be named {name} twice in the output", field.name()),
            ));
        }
        fields.push(field.as_ref().clone().with_name(name));
    }
    Ok(std::sync::Arc::new(Schema::new(fields)))
}

/// A column of strings as bytes: any Arrow string or binary type, or a dictionary of one.
/// The array is downcast once per batch, not per value: the pair readers get every value
/// of a batch on one thread before encoding them.
pub(super) enum StrColumn {
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    Utf8View(StringViewArray),
    Binary(BinaryArray),
    LargeBinary(LargeBinaryArray),
    BinaryView(BinaryViewArray),
    /// Row i holds value `keys[i]` of `values` where the key is not null.
    Dictionary {
        nulls: Option<NullBuffer>,
        keys: Vec<usize>,
        values: Box<StrColumn>,
    },
}

impl StrColumn {
    /// Whether a column of this type can be read as strings.
    pub(super) fn readable(ty: &DataType) -> bool {
        match ty {
            DataType::Dictionary(key, value) => key.is_dictionary_key_type() && StrColumn::flat(value),
            other => StrColumn::flat(other),
        }
    }

    fn flat(ty: &DataType) -> bool {
        use DataType::*;
        matches!(ty, Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView)
    }

    /// The column, of a type [`StrColumn::readable`] accepts (schemas are checked first).
    pub(super) fn new(array: ArrayRef) -> StrColumn {
        match array.data_type() {
            DataType::Utf8 => StrColumn::Utf8(array.as_string().clone()),
            DataType::LargeUtf8 => StrColumn::LargeUtf8(array.as_string().clone()),
            DataType::Utf8View => StrColumn::Utf8View(array.as_string_view().clone()),
            DataType::Binary => StrColumn::Binary(array.as_binary().clone()),
            DataType::LargeBinary => StrColumn::LargeBinary(array.as_binary().clone()),
            DataType::Dictionary(..) => {
                let dict = array.as_any_dictionary();
                StrColumn::Dictionary {
                    nulls: dict.nulls().cloned(),
                    keys: dict.normalized_keys(),
                    values: Box::new(StrColumn::new(dict.values().clone())),
                }
            }
            _ => StrColumn::BinaryView(array.as_binary_view().clone()),
        }
    }

    /// The value at `row`; `None` when null.
    #[inline]
    pub(super) fn get(&self, row: usize) -> Option<&[u8]> {
        match self {
            StrColumn::Utf8(a) => a.is_valid(row).then(|| a.value(row).as_bytes()),
            StrColumn::LargeUtf8(a) => a.is_valid(row).then(|| a.value(row).as_bytes()),
            StrColumn::Utf8View(a) => a.is_valid(row).then(|| a.value(row).as_bytes()),
            StrColumn::Binary(a) => a.is_valid(row).then(|| a.value(row)),
            StrColumn::LargeBinary(a) => a.is_valid(row).then(|| a.value(row)),
            StrColumn::BinaryView(a) => a.is_valid(row).then(|| a.value(row)),
            StrColumn::Dictionary { nulls, keys, values } => {
                if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                    return None;
                }
                // A key past the values (possible only under a null) reads as null.
                let k = *keys.get(row)?;
                if k < values.len() {
                    values.get(k)
                } else {
                    None
                }
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            StrColumn::Utf8(a) => a.len(),
            StrColumn::LargeUtf8(a) => a.len(),
            StrColumn::Utf8View(a) => a.len(),
            StrColumn::Binary(a) => a.len(),
            StrColumn::LargeBinary(a) => a.len(),
            StrColumn::BinaryView(a) => a.len(),
            StrColumn::Dictionary { keys, .. } => keys.len(),
        }
    }

    fn len_at(&self, row: usize) -> usize {
        self.get(row).map_or(0, <[u8]>::len)
    }
}

/// The input batch being handed out by a table reader and its next row, with the columns
/// it reads as strings: the cursor the pair and candidate readers share.
pub(super) struct BatchCursor {
    batches: Batches,
    /// The string columns' indices, and the current batch's columns.
    read: Vec<usize>,
    pub(super) columns: Vec<StrColumn>,
    current: Option<RecordBatch>,
    pub(super) row: usize,
}

impl BatchCursor {
    pub(super) fn new(batches: Batches, read: Vec<usize>) -> BatchCursor {
        BatchCursor { batches, read, columns: Vec::new(), current: None, row: 0 }
    }

    /// Rows left in the current input batch, reading the next one when it is used up;
    /// 0 at the end of the input.
    pub(super) fn rows_left(&mut self) -> Result<usize> {
        loop {
            if let Some(b) = &self.current {
                if self.row < b.num_rows() {
                    return Ok(b.num_rows() - self.row);
                }
            }
            match self.batches.next() {
                None => return Ok(0),
                Some(Err(e)) => return Err(e),
                Some(Ok(b)) => {
                    self.columns = self.read.iter().map(|&i| StrColumn::new(b.column(i).clone())).collect();
                    self.current = Some(b);
                    self.row = 0;
                }
            }
        }
    }

    /// The carried columns of `take` rows from `start`, as the output names them; `None`
    /// when nothing is carried.
    pub(super) fn carried(
        &self,
        carried: &[usize],
        schema: &SchemaRef,
        start: usize,
        take: usize,
    ) -> Result<Option<RecordBatch>> {
        match &self.current {
            Some(b) => carried_rows(b, carried, schema, start, take),
            None => Ok(None),
        }
    }
}

/// The carried columns of `take` rows of `batch` from `start`, as the output names them;
/// `None` when nothing is carried.
pub(super) fn carried_rows(
    batch: &RecordBatch,
    carried: &[usize],
    schema: &SchemaRef,
    start: usize,
    take: usize,
) -> Result<Option<RecordBatch>> {
    if carried.is_empty() {
        return Ok(None);
    }
    let cols: Vec<ArrayRef> = carried.iter().map(|&i| batch.column(i).slice(start, take)).collect();
    RecordBatch::try_new(schema.clone(), cols).map(Some).map_err(|e| Error::Internal(format!("carried columns: {e}")))
}

/// Pairs from record batches; one input batch in memory at a time.
pub(super) struct TablePairs {
    /// The input batch being handed out, with the pair columns.
    cursor: BatchCursor,
    place: Where,
    alphabet: Alphabet,
    limits: BatchLimits,
    names: [String; 4],
    carried: Vec<usize>,
    carried_schema: SchemaRef,
    counter: Counter,
}

impl TablePairs {
    pub(super) fn new(
        place: Where,
        schema: SchemaRef,
        batches: Batches,
        alphabet: Alphabet,
        columns: &PairColumns,
        limits: BatchLimits,
    ) -> Result<TablePairs> {
        let pair = pair_indices(&place, &schema, columns)?;
        let carried = carried_indices(&place, &schema, columns, &pair)?;
        let carried_schema = carried_schema(&place, &schema, &carried)?;
        Ok(TablePairs {
            cursor: BatchCursor::new(batches, pair.to_vec()),
            place,
            alphabet,
            limits,
            names: columns.names.clone(),
            carried,
            carried_schema,
            counter: Counter { pairs: 0 },
        })
    }

    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        while batch.len() < self.limits.pairs && batch.seqs.residues.len() < self.limits.residues {
            let left = self.cursor.rows_left()?;
            if left == 0 {
                break;
            }
            // The rows that fit (at least one).
            let budget = self.limits.residues - batch.seqs.residues.len();
            let (mut take, mut size) = (0, 0);
            let (row, columns) = (self.cursor.row, &self.cursor.columns);
            for r in row..row + left.min(self.limits.pairs - batch.len()) {
                size += columns[1].len_at(r) + columns[3].len_at(r);
                if take > 0 && size > budget {
                    break;
                }
                take += 1;
            }
            let (names, place) = (&self.names, &self.place);
            let first = self.counter.pairs;
            let fields = |i: usize| -> Result<Fields<'_>> {
                let mut f: Fields<'_> = [&[]; 4];
                for (k, slot) in f.iter_mut().enumerate() {
                    *slot = columns[k].get(row + i).ok_or_else(|| {
                        let id = columns[0].get(row + i).unwrap_or_default();
                        Error::record(place, (first + i as u64) as usize, id, format!("{} is null", names[k]))
                    })?;
                }
                Ok(f)
            };
            append_pairs(batch, take, fields, place, first, |_| String::new(), self.alphabet)?;
            batch.carried.extend(self.cursor.carried(&self.carried, &self.carried_schema, row, take)?);
            self.cursor.row += take;
            self.counter.pairs += take as u64;
        }
        if batch.is_empty() {
            return self.counter.end(&self.place);
        }
        Ok(true)
    }
}

impl Source for TablePairs {
    fn carried(&self) -> Carried {
        self.carried_schema.clone()
    }

    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool> {
        self.fill_inner(batch)
    }
}
