//! The one door to SQL for the rest of the crate: a connection to SQLite (rusqlite) or
//! PostgreSQL (the `postgres` crate) behind one small API — `execute`, `query`,
//! `batch` and transactions — with parameters and rows as [`Value`]s. Statements are
//! written once, with SQLite's `?N` placeholders; PostgreSQL gets them as `$N`. Both
//! backends cache prepared statements per connection.
//!
//! What differs between the two dialects stays here or in [`crate::schema`]: how a
//! transaction begins, how a table's existence is checked, the schema version's home.

use crate::pg::PgConn;
use crate::value::sqlite_value;
pub(crate) use crate::value::{params, storable_text, Row, Value};
use crate::StoreError;
use postgres::types::ToSql;
use std::rc::Rc;

/// An open connection to one of the two backends.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgConn>),
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
