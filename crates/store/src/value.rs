//! A parameter or column value and a result row, shared by both backends: how a
//! [`Value`] goes into SQLite (rusqlite) and PostgreSQL (`postgres`), and how a row is
//! read with errors that name the column.

use crate::{StoreError, CHANGED_OUTSIDE};
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
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
    ($($v:expr),* $(,)?) => { &[$($crate::value::Value::from($v)),*][..] };
}
pub(crate) use params;

/// One result row, read by position with typed getters whose errors name the column.
pub(crate) struct Row {
    pub(crate) names: Rc<[String]>,
    pub(crate) values: Vec<Value>,
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

pub(crate) fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value {
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
