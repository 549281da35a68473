package temporal

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// The PostgreSQL store: Temporal's postgres12 SQL plugin (lib/pq), one
// database for the default store and one for the visibility store, each
// with its schema set up and updated by Temporal's own schema tool (what
// `temporal-sql-tool setup-schema -v 0.0` and `update-schema -d
// schema/postgresql/v12/...` do, from the schema files embedded in the
// server module, so the schema always matches the linked server).

// Embedded schema names (directories of go.temporal.io/server/schema).
const (
	pgDefaultSchema    = "postgresql/v12/temporal"
	pgVisibilitySchema = "postgresql/v12/visibility"
	// pgAdminDB is the database CREATE DATABASE runs from.
	pgAdminDB = "postgres"
	// visibilitySuffix names the visibility database after the default one
	// (temporal -> temporal_visibility, as Temporal's docs and chart do).
	visibilitySuffix = "_visibility"
)

// PostgresStores are the default and visibility store configurations a
// PostgreSQL DSN stands for.
type PostgresStores struct {
	Default, Visibility config.SQL
}

// ParsePostgresDSN reads postgres://user:password@host:port/database?params
// (postgresql:// too; port defaults to 5432, database to "temporal"). The
// visibility store is the database named <database>_visibility on the same
// server. Query parameters are lib/pq connection parameters (sslmode,
// sslrootcert, connect_timeout ...); sslmode defaults to disable, as in
// Temporal's own configuration.
func ParsePostgresDSN(dsn string) (PostgresStores, error) {
	bad := func(reason string) (PostgresStores, error) {
		return PostgresStores{}, fmt.Errorf("temporal PostgreSQL DSN %q: %s (want postgres://user:password@host:port/database?sslmode=disable)", RedactDSN(dsn), reason)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return bad("not a URL")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return bad(fmt.Sprintf("scheme %q, want postgres", u.Scheme))
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return bad("no host")
	}
	if port == "" {
		port = "5432"
	}
	if u.User == nil || u.User.Username() == "" {
		return bad("no user")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "temporal"
	}
	if strings.ContainsAny(db, `/"`) {
		return bad(fmt.Sprintf("database name %q", db))
	}
	attrs := map[string]string{}
	for k, vs := range u.Query() {
		if len(vs) != 1 {
			return bad(fmt.Sprintf("parameter %s given %d times", k, len(vs)))
		}
		attrs[k] = vs[0]
	}
	pw, _ := u.User.Password()
	base := config.SQL{
		PluginName: pgplugin.PluginName, User: u.User.Username(), Password: pw,
		ConnectAddr: net.JoinHostPort(host, port), ConnectProtocol: "tcp", ConnectAttributes: attrs,
		// Every service of the embedded server opens its own pools: four
		// services times (10 + 5) stays well below PostgreSQL's default
		// max_connections of 100.
		MaxConns: 10, MaxIdleConns: 10, MaxConnLifetime: time.Hour,
	}
	s := PostgresStores{Default: base, Visibility: base}
	s.Default.DatabaseName = db
	s.Visibility.DatabaseName = db + visibilitySuffix
	s.Visibility.MaxConns, s.Visibility.MaxIdleConns = 5, 5
	s.Default.ConnectAttributes = cloneAttrs(attrs)
	s.Visibility.ConnectAttributes = cloneAttrs(attrs)
	return s, nil
}

func cloneAttrs(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// RedactDSN is the DSN with its password replaced, for logs and errors.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// openPostgres makes both databases ready: each is created when missing
// (the user needs CREATEDB then; an existing database needs only
// ownership), and its schema is set up and updated to the version this
// server embeds. Returns the store configurations.
func openPostgres(ctx context.Context, dsn string, logger log.Logger) (PostgresStores, error) {
	s, err := ParsePostgresDSN(dsn)
	if err != nil {
		return PostgresStores{}, err
	}
	for _, st := range []struct {
		cfg    *config.SQL
		schema string
	}{{&s.Default, pgDefaultSchema}, {&s.Visibility, pgVisibilitySchema}} {
		if err := ensureDatabase(ctx, *st.cfg, logger); err != nil {
			return PostgresStores{}, err
		}
		if err := updateSchema(*st.cfg, st.schema, logger); err != nil {
			return PostgresStores{}, fmt.Errorf("temporal schema %s in PostgreSQL database %q at %s: %w", st.schema, st.cfg.DatabaseName, st.cfg.ConnectAddr, err)
		}
	}
	return s, nil
}

// ensureDatabase checks that the database answers, creating it (with
// Temporal's tool, from the "postgres" database) when the server says it
// does not exist. Temporal's connection handle logs connection errors and
// returns "no usable database connection found", so the first check is a
// plain ping that reports what the server said.
func ensureDatabase(ctx context.Context, cfg config.SQL, logger log.Logger) error {
	err := ping(ctx, cfg)
	if err == nil {
		return nil
	}
	where := fmt.Sprintf("PostgreSQL database %q at %s (user %s)", cfg.DatabaseName, cfg.ConnectAddr, cfg.User)
	if !strings.Contains(err.Error(), fmt.Sprintf("database %q does not exist", cfg.DatabaseName)) {
		return fmt.Errorf("temporal %s: %w", where, err)
	}
	admin := cfg
	admin.DatabaseName = pgAdminDB
	if perr := ping(ctx, admin); perr != nil {
		return fmt.Errorf("temporal %s does not exist, and it cannot be created from database %q (%v): create it, owned by %s", where, pgAdminDB, perr, cfg.User)
	}
	target := cfg // DoCreateDatabase creates target.DatabaseName, connected to pgAdminDB
	if cerr := sqltool.DoCreateDatabase(&target, pgAdminDB, logger); cerr != nil {
		return fmt.Errorf("temporal %s does not exist and creating it failed (%v): create it, owned by %s, or grant %s CREATEDB", where, cerr, cfg.User, cfg.User)
	}
	if err := ping(ctx, cfg); err != nil {
		return fmt.Errorf("temporal %s (just created): %w", where, err)
	}
	return nil
}

// adminDSN is the lib/pq URL for cfg, built the way Temporal's postgres
// session builds it (sslmode disable unless given).
func adminDSN(cfg config.SQL) string {
	q := url.Values{}
	for k, v := range cfg.ConnectAttributes {
		q.Set(k, v)
	}
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password), Host: cfg.ConnectAddr,
		Path: "/" + cfg.DatabaseName, RawQuery: q.Encode()}
	return u.String()
}

func ping(ctx context.Context, cfg config.SQL) error {
	// "postgres" is lib/pq's driver, registered by Temporal's postgres12 plugin.
	db, err := sql.Open("postgres", adminDSN(cfg))
	if err != nil {
		return err
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return db.PingContext(pctx)
}

// updateSchema brings one database to the newest schema version embedded
// in the server module: setup-schema -v 0.0 (version tables only; a no-op
// on a database past 0.0), then update-schema over the versioned
// directories above the recorded version.
func updateSchema(cfg config.SQL, name string, logger log.Logger) error {
	conn, err := sqltool.NewConnection(&cfg, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if err := schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: name}, logger).Run(); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

// WipePostgres empties both Temporal databases the DSN names (what
// --fresh does to the SQLite file): every table, with Temporal's tool (as
// `temporal-sql-tool setup-schema --overwrite` does), and the functions the
// visibility schema creates, so the next start sets the schema up again. A
// database that does not exist is already clean.
func WipePostgres(ctx context.Context, dsn string) error {
	s, err := ParsePostgresDSN(dsn)
	if err != nil {
		return err
	}
	logger := log.NewNoopLogger()
	for _, cfg := range []config.SQL{s.Default, s.Visibility} {
		if err := ping(ctx, cfg); err != nil {
			if strings.Contains(err.Error(), fmt.Sprintf("database %q does not exist", cfg.DatabaseName)) {
				continue
			}
			return fmt.Errorf("wipe temporal PostgreSQL database %q at %s: %w", cfg.DatabaseName, cfg.ConnectAddr, err)
		}
		if err := wipeDatabase(ctx, cfg, logger); err != nil {
			return fmt.Errorf("wipe temporal PostgreSQL database %q at %s: %w", cfg.DatabaseName, cfg.ConnectAddr, err)
		}
	}
	return nil
}

func wipeDatabase(ctx context.Context, cfg config.SQL, logger log.Logger) error {
	conn, err := sqltool.NewConnection(&cfg, logger)
	if err != nil {
		return err
	}
	err = conn.DropAllTables()
	conn.Close()
	if err != nil {
		return err
	}
	db, err := sql.Open("postgres", adminDSN(cfg))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT p.oid::regprocedure::text FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) = current_user`)
	if err != nil {
		return err
	}
	var funcs []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return err
		}
		funcs = append(funcs, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range funcs {
		if _, err := db.ExecContext(ctx, "DROP FUNCTION IF EXISTS "+f); err != nil {
			return err
		}
	}
	return nil
}
