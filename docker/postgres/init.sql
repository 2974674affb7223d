-- Sample tables of the PostgreSQL source (database 'shop', schema 'inventory'), created by the
-- postgres image on the first start of an empty data volume (/docker-entrypoint-initdb.d, run by
-- psql as the superuser, in the database POSTGRES_DB, stopping at the first error).
--
-- The submit-postgres service captures 'inventory\..*' into the Iceberg tables
-- postgres.customers and postgres.orders. Every captured table needs a primary key, and columns
-- of the types the capture maps (README.md of the repository, "apply --source
-- postgres|mysql|mariadb": no unconstrained numeric, interval, array or enum columns).
-- The server runs with wal_level=logical (compose.yaml); the capture creates its replication slot
-- and publication itself.

CREATE SCHEMA inventory;

CREATE TABLE inventory.customers (
    id          bigserial PRIMARY KEY,
    first_name  text        NOT NULL,
    last_name   text        NOT NULL,
    email       text        NOT NULL UNIQUE,
    notes       text,
    preferences jsonb,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- FULL: every update and delete carries the whole old row. With the default identity (the
-- primary key), PostgreSQL leaves an unchanged TOASTed value (a long 'notes' text or a large
-- 'preferences' document) out of an update, and the capture refuses such an update rather than
-- guess the value. Worth the larger WAL for tables with long text, JSON or binary columns.
ALTER TABLE inventory.customers REPLICA IDENTITY FULL;

CREATE TABLE inventory.orders (
    id          bigserial PRIMARY KEY,
    customer_id bigint        NOT NULL REFERENCES inventory.customers (id),
    order_date  date          NOT NULL DEFAULT current_date,
    status      text          NOT NULL DEFAULT 'new'
                              CHECK (status IN ('new', 'paid', 'shipped', 'cancelled')),
    quantity    integer       NOT NULL CHECK (quantity > 0),
    total       numeric(12, 2) NOT NULL,
    updated_at  timestamp     NOT NULL DEFAULT now()
);
-- No REPLICA IDENTITY FULL here: the columns are short and never TOASTed, so the default identity
-- (the primary key) gives every value an update needs and keeps the WAL smaller.

INSERT INTO inventory.customers (first_name, last_name, email, notes, preferences) VALUES
    ('Ada',      'Lovelace', 'ada@example.com',      'prefers email',   '{"newsletter": true}'),
    ('Alan',     'Turing',   'alan@example.com',     NULL,              '{"newsletter": false}'),
    ('Grace',    'Hopper',   'grace@example.com',    'key account',     '{"newsletter": true, "language": "en"}'),
    ('Edsger',   'Dijkstra', 'edsger@example.com',   NULL,              NULL),
    ('Barbara',  'Liskov',   'barbara@example.com',  'invoice monthly', '{"newsletter": false, "language": "en"}');

INSERT INTO inventory.orders (customer_id, order_date, status, quantity, total) VALUES
    (1, DATE '2026-11-02', 'shipped',   2,  39.80),
    (1, DATE '2026-11-20', 'paid',      1, 129.00),
    (2, DATE '2026-11-21', 'new',       5,  12.50),
    (3, DATE '2026-11-25', 'cancelled', 1, 999.99),
    (5, DATE '2026-11-28', 'paid',      3,  74.85);
