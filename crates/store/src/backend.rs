//! The one door to SQL for the rest of the crate: a connection to SQLite (rusqlite) or
//! PostgreSQL (the `postgres` crate) behind one small API — `execute`, `query`,
//! `batch` and transactions — with parameters and rows as [`Value`]s. Statements are
//! written once, with SQLite's `?N` placeholders; PostgreSQL gets them as `$N`. Both
//! backends cache prepared statements per connection.
//!
//! What differs between the two dialects stays here or in [`crate::schema`]: how a
//! transaction begins, how a table's existence is checked, the schema version's home.

use crate::{StoreError, CHANGED_OUTSIDE};
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A parameter or a column value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// Only read (a value dualperf never writes; reported as the wrong type).
    Blob,
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob => "blob",
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(i64::from(v))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(i64::from(v))
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(storable_text(v))
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(storable_text(v))
    }
}

/// Every text dualperf writes passes here: NUL (U+0000), which PostgreSQL text cannot
/// hold ("invalid byte sequence for encoding UTF8: 0x00") and which C readers of an
/// SQLite file take as the end of the text, is replaced by U+FFFD, as
/// `wire::text::cap_metadata` does with a peer's metadata. One policy for both
/// backends: a label, metadata, spec or failure reason with NUL stores, resumes and
/// imports, the replacement character showing where the NUL was.
pub(crate) fn storable_text(v: &str) -> String {
    if v.contains('\0') {
        v.replace('\0', "\u{fffd}")
    } else {
        v.to_string()
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// `params![a, b, …]`: a parameter list of [`Value`]s.
macro_rules! params {
    ($($v:expr),* $(,)?) => { &[$($crate::backend::Value::from($v)),*][..] };
}
pub(crate) use params;

/// One result row, read by position with typed getters whose errors name the column.
pub(crate) struct Row {
    names: Rc<[String]>,
    values: Vec<Value>,
}

impl Row {
    fn get(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }

    fn name(&self, i: usize) -> &str {
        self.names.get(i).map_or("?", String::as_str)
    }

    fn wrong_type(&self, i: usize) -> StoreError {
        StoreError::BadValue(format!(
            "column '{}' holds a {} value where dualperf stores another type; {CHANGED_OUTSIDE}",
            self.name(i),
            self.get(i).kind()
        ))
    }

    fn out_of_range(&self, i: usize, v: i64) -> StoreError {
        StoreError::BadValue(format!(
            "column '{}' of a row holds {v}, out of range for what it stores; {CHANGED_OUTSIDE}",
            self.name(i)
        ))
    }

    pub fn i64(&self, i: usize) -> Result<i64, StoreError> {
        match self.get(i) {
            Value::Int(v) => Ok(*v),
            _ => Err(self.wrong_type(i)),
        }
    }

    pub fn u32(&self, i: usize) -> Result<u32, StoreError> {
        let v = self.i64(i)?;
        u32::try_from(v).map_err(|_| self.out_of_range(i, v))
    }

    pub fn f64(&self, i: usize) -> Result<f64, StoreError> {
        match self.get(i) {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            _ => Err(self.wrong_type(i)),
        }
    }

    pub fn bool(&self, i: usize) -> Result<bool, StoreError> {
        Ok(self.i64(i)? != 0)
    }

    pub fn opt_bool(&self, i: usize) -> Result<Option<bool>, StoreError> {
        match self.get(i) {
            Value::Null => Ok(None),
            _ => self.bool(i).map(Some),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, StoreError> {
        match self.get(i) {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(self.wrong_type(i)),
        }
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.get(i) {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }
}

/// An open connection to one of the two backends.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgConn>),
}

/// Prepared statements kept per PostgreSQL connection.
const MAX_PREPARED: usize = 256;

/// A PostgreSQL session: the client (behind a RefCell: reads take `&self`, as with
/// SQLite) and its prepared statements.
pub(crate) struct PgConn {
    pub(crate) client: RefCell<postgres::Client>,
    statements: RefCell<HashMap<String, postgres::Statement>>,
    /// The URL without its password, for messages.
    pub(crate) url: String,
}

impl PgConn {
    pub(crate) fn new(client: postgres::Client, url: String) -> PgConn {
        PgConn {
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
            url,
        }
    }

    fn statement(&self, sql: &str) -> Result<postgres::Statement, StoreError> {
        if let Some(st) = self.statements.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .borrow_mut()
            .prepare(&dollar_placeholders(sql))
            .map_err(|e| crate::pg::error(e, &self.url))?;
        let mut cache = self.statements.borrow_mut();
        // Multi-row inserts differ by their row count: keep the cache (and the
        // server's prepared statements, closed when dropped) bounded.
        if cache.len() >= MAX_PREPARED {
            cache.clear();
        }
        cache.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// `?1` → `$1` (the statements hold no string literal with a `?`).
fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl Conn {
    pub fn is_postgres(&self) -> bool {
        matches!(self, Conn::Postgres(_))
    }

    /// The SQLite connection, if this is one (PRAGMAs, tests).
    pub fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Conn::Sqlite(c) => Some(c),
            Conn::Postgres(_) => None,
        }
    }

    /// Run one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                Ok(st.execute(rusqlite::params_from_iter(params.iter()))? as u64)
            }
            Conn::Postgres(pg) => {
                let st = pg.statement(sql)?;
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let n = pg.client.borrow_mut().execute(&st, &refs);
                n.map_err(|e| crate::pg::statement_error(e, &pg.url, sql))
            }
        }
    }

    /// Every row of a query.
    pub fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let names: Rc<[String]> = st.column_names().map(|n| n.to_string()).collect();
                let width = names.len();
                let mut rows = st.query(rusqlite::params_from_iter(params.iter()))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut values = Vec::with_capacity(width);
                    for i in 0..width {
                        values.push(sqlite_value(r.get_ref(i)?));
                    }
                    out.push(Row {
                        names: names.clone(),
                        values,
                    });
                }
                Ok(out)
            }
            Conn::Postgres(pg) => {
                let st = pg.statement(sql)?;
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let rows = pg
                    .client
                    .borrow_mut()
                    .query(&st, &refs)
                    .map_err(|e| crate::pg::statement_error(e, &pg.url, sql))?;
                let names: Rc<[String]> =
                    st.columns().iter().map(|c| c.name().to_string()).collect();
                rows.iter()
                    .map(|r| {
                        let values = (0..r.len())
                            .map(|i| crate::pg::value(r, i))
                            .collect::<Result<_, _>>()?;
                        Ok(Row {
                            names: names.clone(),
                            values,
                        })
                    })
                    .collect()
            }
        }
    }

    /// The first row of a query, if any.
    pub fn query_opt(&self, sql: &str, params: &[Value]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The first row of a query that always returns one (`RETURNING`, aggregates).
    pub fn query_one(&self, sql: &str, params: &[Value]) -> Result<Row, StoreError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::BadValue(format!("no row from: {sql}")))
    }

    /// Several statements without parameters (schema changes).
    pub fn batch(&self, sql: &str) -> Result<(), StoreError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(pg) => pg
                .client
                .borrow_mut()
                .batch_execute(sql)
                .map_err(|e| crate::pg::error(e, &pg.url)),
        }
    }

    /// Begin a write transaction: SQLite takes the write lock at once (BEGIN
    /// IMMEDIATE: a deferred one upgraded from a read fails with "database is locked"
    /// instead of waiting); PostgreSQL locks rows as they are written.
    pub fn transaction(&self) -> Result<Tx<'_>, StoreError> {
        self.batch(match self {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(_) => "BEGIN",
        })?;
        Ok(Tx {
            conn: self,
            open: true,
        })
    }

    /// Whether a table (or view) exists.
    pub fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        let sql = match self {
            Conn::Sqlite(_) => "SELECT count(*) FROM sqlite_master WHERE name = ?1",
            Conn::Postgres(_) => {
                "SELECT count(*) FROM pg_catalog.pg_class
                 WHERE relname = ?1 AND pg_catalog.pg_table_is_visible(oid)"
            }
        };
        Ok(self.query_one(sql, params![name])?.i64(0)? > 0)
    }

    /// Insert many rows into `table` with as few statements as the backends allow.
    pub fn insert_rows(
        &self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
    ) -> Result<(), StoreError> {
        // SQLite allows 32766 parameters a statement, PostgreSQL 65535.
        let per_statement = (30_000 / columns.len().max(1)).max(1);
        for chunk in rows.chunks(per_statement) {
            let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
            let mut n = 0;
            for (r, row) in chunk.iter().enumerate() {
                sql.push_str(if r == 0 { "(" } else { ", (" });
                for c in 0..row.len() {
                    n += 1;
                    if c > 0 {
                        sql.push_str(", ");
                    }
                    sql.push_str(&format!("?{n}"));
                }
                sql.push(')');
            }
            let params: Vec<Value> = chunk.iter().flatten().cloned().collect();
            self.execute(&sql, &params)?;
        }
        Ok(())
    }
}

/// An open transaction: rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx<'a> {
    conn: &'a Conn,
    open: bool,
}

impl Tx<'_> {
    pub fn commit(mut self) -> Result<(), StoreError> {
        self.open = false;
        let r = self.conn.batch("COMMIT");
        if r.is_err() {
            let _ = self.conn.batch("ROLLBACK");
        }
        r
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.batch("ROLLBACK");
        }
    }
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Value::Text(s.to_string()),
            Err(_) => Value::Blob,
        },
        ValueRef::Blob(_) => Value::Blob,
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null | Value::Blob => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

/// A value goes into whatever column type the server expects for it, converted
/// (an integer into INT4, BOOL, …) or refused with a message naming the type.
impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null | Value::Blob, _) => Ok(IsNull::Yes),
            (Value::Int(v), &Type::INT8) => v.to_sql(ty, out),
            (Value::Int(v), &Type::INT4) => i32::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::INT2) => i16::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::BOOL) => (*v != 0).to_sql(ty, out),
            (Value::Int(v), &Type::FLOAT8) => (*v as f64).to_sql(ty, out),
            (Value::Real(v), &Type::FLOAT8) => v.to_sql(ty, out),
            (Value::Real(v), &Type::FLOAT4) => (*v as f32).to_sql(ty, out),
            (Value::Text(s), _) if <&str as ToSql>::accepts(ty) => s.as_str().to_sql(ty, out),
            (v, ty) => Err(format!("cannot store a {} value in a {ty} column", v.kind()).into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_become_dollars() {
        assert_eq!(
            super::dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?12 OR d ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $12 OR d ?"
        );
    }
}
