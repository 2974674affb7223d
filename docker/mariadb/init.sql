-- Sample tables of the MariaDB source (database 'shop') and the grants of the capture's user,
-- run by the mariadb image on the first start of an empty data volume
-- (/docker-entrypoint-initdb.d, as root, in the database MARIADB_DATABASE).
--
-- The submit-mariadb service captures every table of 'shop' into the Iceberg tables
-- mariadb.products and mariadb.stock_moves. Every captured table needs a primary key, and columns
-- of the types the capture maps (README.md of the repository; no spatial types). The server runs
-- with the ROW binlog and full row images (compose.yaml).

USE shop;

CREATE TABLE products (
    id         INT           NOT NULL AUTO_INCREMENT PRIMARY KEY,
    sku        VARCHAR(32)   NOT NULL UNIQUE,
    name       VARCHAR(255)  NOT NULL,
    category   ENUM('tools', 'garden', 'kitchen') NOT NULL,
    price      DECIMAL(10, 2) NOT NULL,
    in_stock   INT           NOT NULL DEFAULT 0,
    active     BOOLEAN       NOT NULL DEFAULT TRUE,
    updated_at DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE stock_moves (
    id         BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    product_id INT           NOT NULL,
    delta      INT           NOT NULL,
    reason     VARCHAR(64),
    moved_at   TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    CONSTRAINT stock_moves_product FOREIGN KEY (product_id) REFERENCES products (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

INSERT INTO products (sku, name, category, price, in_stock) VALUES
    ('HAM-01', 'Claw hammer',       'tools',   14.90, 40),
    ('SAW-02', 'Japanese pull saw', 'tools',   32.50, 12),
    ('HOE-03', 'Garden hoe',        'garden',  21.00,  8),
    ('POT-04', 'Cast iron pot',     'kitchen', 59.95,  5),
    ('KNF-05', 'Chef knife',        'kitchen', 44.00, 17);

INSERT INTO stock_moves (product_id, delta, reason) VALUES
    (1,  40, 'initial stock'),
    (2,  12, 'initial stock'),
    (3,   8, 'initial stock'),
    (4,   5, 'initial stock'),
    (5,  17, 'initial stock');

-- The capture's user: the image creates MARIADB_USER with MARIADB_PASSWORD (compose.yaml) and
-- gives it every privilege on MARIADB_DATABASE; this replaces them with what Debezium's MariaDB
-- connector documents for its user ("Setting up MariaDB", "Creating a user"): SELECT (the initial
-- snapshot), RELOAD (FLUSH TABLES WITH READ LOCK for a consistent snapshot), SHOW DATABASES,
-- REPLICATION SLAVE (read the binlog) and REPLICATION CLIENT (SHOW MASTER STATUS, SHOW BINARY
-- LOGS; called BINLOG MONITOR since MariaDB 10.5.2, the old name still works). The replication
-- privileges are global, so they are granted ON *.*; SELECT could be narrowed to shop.*.
REVOKE ALL PRIVILEGES ON shop.* FROM 'iceberg_cdc'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT
    ON *.* TO 'iceberg_cdc'@'%';
