//! Pair tables: an Arrow IPC stream or file, or a Parquet file, read record batch by record
//! batch. The pair columns are found by name (`--query-col` and friends); every other
//! column, or those `--carry` names, travels through to the output beside the results, so
//! they join back to the table they came from. A carried column whose name is one of the
//! output's own columns is renamed `input_<name>`.

use std::io::Read;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use super::{append_pairs, fused, BatchLimits, Counter, Fields, PairColumns, PairReader, Source};
use crate::error::{Error, Result, Where};
use crate::io::input::{peek, read_error, Head, Input};
use crate::io::ipc::{guard_quiet, IpcReader};
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch};

const ARROW_CONTINUATION: [u8; 4] = [0xff; 4];
const ARROW_FILE_MAGIC: &[u8; 6] = b"ARROW1";
const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// Rows per record batch asked of the Parquet decoder.
const PARQUET_BATCH_ROWS: usize = 65_536;

/// Record batches with errors that already name the file and say what is wrong.
pub type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

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
    let project = |place: &Where, schema: &Schema| wanted_columns(place, schema, columns);
    match open_table(raw, &project)? {
        Ok((schema, batches)) => Ok(Ok(fused(TablePairs::new(place, schema, batches, alphabet, columns, limits)?))),
        Err(input) => Ok(Err(input)),
    }
}

/// The record batches of a table (Arrow IPC stream or file, Parquet) when the input's first
/// bytes say it is one; otherwise the (decompressed) input, handed back. The formats with an
/// index at their end (Arrow IPC file, Parquet) are read from the file itself; Parquet
/// through a pipe or gzip is buffered whole. `project` names the top-level columns Parquet
/// decodes (Arrow streams decode every column).
pub(super) fn open_table(raw: Head, project: Project<'_>) -> Result<std::result::Result<(SchemaRef, Batches), Input>> {
    let place = raw.place.clone();
    let refuse_file = || {
        Error::file(
            &place,
            "Arrow IPC file format can only be read from an uncompressed file, not stdin, a pipe or gzip: \
             use the Arrow IPC stream format",
        )
    };
    let (schema, batches): (SchemaRef, Batches) = if raw.bytes.starts_with(ARROW_FILE_MAGIC) {
        let file = raw.into_regular_file()?.ok_or_else(refuse_file)?;
        let reader = IpcReader::file(place.clone(), file)?;
        (reader.schema(), Box::new(reader))
    } else if raw.bytes.starts_with(PARQUET_MAGIC) && raw.is_regular_file() {
        let file = raw.into_regular_file()?.ok_or_else(|| Error::Internal("regular file gone".into()))?;
        parquet_batches(&place, file, project)?
    } else {
        let (head, mut input) = peek(&place, raw.into_input()?, 8)?;
        if head.starts_with(&ARROW_CONTINUATION) {
            let reader = IpcReader::stream(place.clone(), input)?;
            (reader.schema(), Box::new(reader))
        } else if head.starts_with(ARROW_FILE_MAGIC) {
            return Err(refuse_file());
        } else if head.starts_with(PARQUET_MAGIC) {
            let mut all = Vec::new();
            input.read_to_end(&mut all).map_err(|e| read_error(&place, e))?;
            parquet_batches(&place, bytes::Bytes::from(all), project)?
        } else {
            return Ok(Err(input));
        }
    };
    Ok(Ok((schema, batches)))
}

/// Which top-level columns of a table's schema a reader needs (errors name what is missing).
pub(super) type Project<'a> = &'a dyn Fn(&Where, &Schema) -> Result<Vec<usize>>;

/// Only the pair and carried columns are decoded. The parquet decoder cannot be checked
/// beforehand: a panic of its on corrupt data becomes an input error.
fn parquet_batches<R>(place: &Where, source: R, project: Project<'_>) -> Result<(SchemaRef, Batches)>
where
    R: parquet::file::reader::ChunkReader + 'static,
{
    let bad = |e: String| Error::file(place, format!("bad Parquet data: {e}"));
    let builder = guard_quiet(|| ParquetRecordBatchReaderBuilder::try_new(source))
        .map_err(bad)?
        .map_err(|e| bad(e.to_string()))?;
    let wanted = project(place, builder.schema())?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    let reader = guard_quiet(|| builder.with_projection(mask).with_batch_size(PARQUET_BATCH_ROWS).build())
        .map_err(bad)?
        .map_err(|e| bad(e.to_string()))?;
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    let place = place.clone();
    let mut reader = reader;
    let batches = std::iter::from_fn(move || match guard_quiet(|| reader.next()) {
        Ok(next) => next.map(|b| b.map_err(|e| Error::file(&place, format!("bad Parquet data: {e}")))),
        Err(p) => Some(Err(Error::file(&place, format!("bad Parquet data: the decoder failed ({p})")))),
    });
    Ok((schema, Box::new(batches)))
}

/// Top-level column indices the reader needs: the pair columns and the carried ones.
fn wanted_columns(place: &Where, schema: &Schema, columns: &PairColumns) -> Result<Vec<usize>> {
    let pair = pair_indices(place, schema, columns)?;
    let carried = carried_indices(place, schema, columns, &pair)?;
    let mut all: Vec<usize> = pair.into_iter().chain(carried).collect();
    all.sort_unstable();
    all.dedup();
    Ok(all)
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
                let ty = schema.field(i).data_type();
                if !matches!(ty, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
                    return Err(Error::file(
                        place,
                        format!("column {name} has type {ty}, expected a string (utf8) column"),
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
                schema.index_of(name).map_err(|_| Error::file(place, format!("--carry: no column {name} in the input")))
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

/// A string column of any Arrow string type.
pub(super) enum StrColumn {
    Utf8(ArrayRef),
    LargeUtf8(ArrayRef),
    Utf8View(ArrayRef),
}

impl StrColumn {
    pub(super) fn new(array: ArrayRef) -> StrColumn {
        match array.data_type() {
            DataType::Utf8 => StrColumn::Utf8(array),
            DataType::LargeUtf8 => StrColumn::LargeUtf8(array),
            _ => StrColumn::Utf8View(array),
        }
    }

    /// The value at `row`; `None` when null.
    pub(super) fn get(&self, row: usize) -> Option<&[u8]> {
        let array = match self {
            StrColumn::Utf8(a) | StrColumn::LargeUtf8(a) | StrColumn::Utf8View(a) => a,
        };
        if array.is_null(row) {
            return None;
        }
        Some(match self {
            StrColumn::Utf8(a) => a.as_string::<i32>().value(row).as_bytes(),
            StrColumn::LargeUtf8(a) => a.as_string::<i64>().value(row).as_bytes(),
            StrColumn::Utf8View(a) => a.as_string_view().value(row).as_bytes(),
        })
    }

    fn len_at(&self, row: usize) -> usize {
        self.get(row).map_or(0, <[u8]>::len)
    }
}

/// Pairs from record batches; one input batch in memory at a time.
pub(super) struct TablePairs {
    batches: Batches,
    place: Where,
    alphabet: Alphabet,
    limits: BatchLimits,
    names: [String; 4],
    pair: [usize; 4],
    carried: Vec<usize>,
    carried_schema: SchemaRef,
    /// The input batch being handed out: its pair columns and carried columns.
    columns: Vec<StrColumn>,
    current: Option<RecordBatch>,
    row: usize,
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
            batches,
            place,
            alphabet,
            limits,
            names: columns.names.clone(),
            pair,
            carried,
            carried_schema,
            columns: Vec::new(),
            current: None,
            row: 0,
            counter: Counter { pairs: 0 },
        })
    }

    /// Rows left in the current input batch, reading the next one when it is used up;
    /// 0 at the end of the input.
    fn rows_left(&mut self) -> Result<usize> {
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
                    self.columns = self.pair.iter().map(|&i| StrColumn::new(b.column(i).clone())).collect();
                    self.current = Some(b);
                    self.row = 0;
                }
            }
        }
    }

    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        while batch.len() < self.limits.pairs && batch.seqs.residues.len() < self.limits.residues {
            let left = self.rows_left()?;
            if left == 0 {
                break;
            }
            // The rows that fit (at least one).
            let budget = self.limits.residues - batch.seqs.residues.len();
            let (mut take, mut size) = (0, 0);
            for r in self.row..self.row + left.min(self.limits.pairs - batch.len()) {
                size += self.columns[1].len_at(r) + self.columns[3].len_at(r);
                if take > 0 && size > budget {
                    break;
                }
                take += 1;
            }
            let (row, columns, names, place) = (self.row, &self.columns, &self.names, &self.place);
            let first = self.counter.pairs;
            let fields = |i: usize| -> Result<Fields<'_>> {
                let mut f: Fields<'_> = [&[]; 4];
                for (k, slot) in f.iter_mut().enumerate() {
                    *slot = columns[k].get(row + i).ok_or_else(|| {
                        let id = columns[0].get(row + i).map(String::from_utf8_lossy).unwrap_or_default();
                        Error::record(place, (first + i as u64) as usize, &id, format!("{} is null", names[k]))
                    })?;
                }
                Ok(f)
            };
            append_pairs(batch, take, fields, place, first, |_| String::new(), self.alphabet)?;
            if !self.carried.is_empty() {
                if let Some(b) = &self.current {
                    let cols: Vec<ArrayRef> = self.carried.iter().map(|&i| b.column(i).slice(row, take)).collect();
                    let part = RecordBatch::try_new(self.carried_schema.clone(), cols)
                        .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
                    batch.carried.push(part);
                }
            }
            self.row += take;
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
