"""The few statements whose spelling differs between SQLite and PostgreSQL."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.sql.dml import Insert


def table_of(model: type[DeclarativeBase]) -> Table:
    """The Core table behind a mapped class (typed, unlike ``__table__``)."""
    return cast(Table, model.__table__)


def insert_ignoring_duplicates(model: type[DeclarativeBase], dialect_name: str) -> Insert:
    """Core ``INSERT ... ON CONFLICT DO NOTHING`` into ``model``'s table for the dialect."""
    table = table_of(model)
    if dialect_name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect_name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing()
    raise ValueError(f"unsupported database dialect {dialect_name!r}")


def upsert(model: type[DeclarativeBase], dialect_name: str, update: list[str]) -> Insert:
    """Core ``INSERT ... ON CONFLICT (primary key) DO UPDATE`` of the ``update`` columns."""
    table = table_of(model)
    keys = list(table.primary_key.columns)
    if dialect_name == "postgresql":
        pg = postgresql.insert(table)
        return pg.on_conflict_do_update(
            index_elements=keys, set_={name: pg.excluded[name] for name in update}
        )
    if dialect_name == "sqlite":
        lite = sqlite.insert(table)
        return lite.on_conflict_do_update(
            index_elements=keys, set_={name: lite.excluded[name] for name in update}
        )
    raise ValueError(f"unsupported database dialect {dialect_name!r}")
