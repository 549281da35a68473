// Package temporal runs the Temporal server (all four services; SQLite
// persistence, or PostgreSQL with Options.Postgres) and its Web UI inside
// the calling process, on loopback: the local world's durable workflow
// engine. Recipe and pitfalls:
// shared/notes/temporal-embedded.md (modelled on the Temporal CLI's
// `server start-dev`).
package temporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/sim/internal/freeport"
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// Options configures the embedded server.
type Options struct {
	// DBPath is the SQLite file; empty keeps everything in memory.
	DBPath string
	// Postgres, when set, is a PostgreSQL DSN
	// (postgres://user:password@host:port/database?sslmode=disable; see
	// ParsePostgresDSN) and replaces SQLite: the default store lives in that
	// database and the visibility store in <database>_visibility, both
	// created when missing and their schemas set up and updated with
	// Temporal's schema tool. DBPath is then ignored.
	Postgres string
	// FrontendPort is the gRPC frontend port (default 7233); UIPort the Web
	// UI port (default 8233; 0 or negative disables the UI).
	FrontendPort int
	UIPort       int
	Namespace    string // default "default"
	// SearchAttributes are registered as Keyword attributes, idempotently
	// (also on an existing DB).
	SearchAttributes []string
	// LogLevel of the server's own logs: "warn" by default.
	LogLevel string
	// LogFile receives the server's logs (JSON); empty: stderr.
	LogFile string
}

// Server is a running embedded Temporal server.
type Server struct {
	opts      Options
	srv       temporal.Server
	ui        *uiserver.Server
	Address   string // host:port of the frontend
	UIAddress string // http://host:port of the Web UI, empty when disabled
}

// newDBShards is the history shard count of a new database: shards process
// their transfer queues in parallel, so a batch starting hundreds of child
// workflows is not serialized behind one shard. A database's shard count
// can never change: it is kept in <db>.shards, and a database created
// before that file existed has one shard.
const newDBShards = 4

const shardsSuffix = ".shards"

// dbShards is the shard count the database at path was created with.
func dbShards(path string) int32 {
	b, err := os.ReadFile(path + shardsSuffix)
	if err != nil {
		return 1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return 1
	}
	return int32(n)
}

// clusterID is fixed so a file DB keeps its identity across restarts.
const clusterID = "6a3c5d1e-5b9a-4f3e-9c0f-4a6f1e2d7b10"

// Start starts the server and (unless disabled) the Web UI, registers the
// namespace and search attributes, and returns once a client can connect.
// A taken port is reported before anything starts.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.FrontendPort == 0 {
		o.FrontendPort = 7233
	}
	if o.UIPort == 0 {
		o.UIPort = 8233
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	if err := portFree(o.FrontendPort); err != nil {
		return nil, fmt.Errorf("temporal frontend port %d is in use (%v): is another `starter dev` running? stop it or pick another port", o.FrontendPort, err)
	}
	if o.UIPort > 0 {
		// ui-server calls os.Exit on a listen error, so check first.
		if err := portFree(o.UIPort); err != nil {
			return nil, fmt.Errorf("temporal Web UI port %d is in use (%v): is another `starter dev` running? stop it or pick another port", o.UIPort, err)
		}
	}
	ports, err := freeport.Pick(4)
	if err != nil {
		return nil, err
	}
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: o.LogLevel, Format: "json", OutputFile: o.LogFile}))
	stores, shards, err := openStore(ctx, o, logger)
	if err != nil {
		return nil, err
	}
	frontend := fmt.Sprintf("%s:%d", loopback, o.FrontendPort)
	srv, err := newServer(o, serverConfig(o, frontend, ports, stores, shards), ports, logger)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("temporal server start: %w", err)
	}
	s := &Server{opts: o, srv: srv, Address: frontend}
	if o.UIPort > 0 {
		s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			Host: loopback, Port: o.UIPort, TemporalGRPCAddress: frontend, EnableUI: true,
			CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true, DisableNewsFetch: true,
			DefaultNamespace: o.Namespace,
		}))
		go func() { _ = s.ui.Start() }()
		s.UIAddress = fmt.Sprintf("http://%s:%d", loopback, o.UIPort)
	}
	if err := s.ensureSearchAttributes(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// loopback is where every service of the embedded server listens.
const loopback = "127.0.0.1"

// stores are the default and visibility stores' SQL configurations (the
// same one for SQLite).
type stores struct {
	name                string // "sqlite" or "postgres"
	defaultStore, visib config.SQL
}

// openStore prepares the store, SQLite (in memory without DBPath; a new
// file gets the schema and newDBShards history shards) or PostgreSQL (a
// new database gets newDBShards shards; the server keeps the count a
// database was created with), with the namespace and its Keyword search
// attributes.
func openStore(ctx context.Context, o Options, logger log.Logger) (stores, int32, error) {
	if o.Postgres != "" {
		pg, err := openPostgres(ctx, o.Postgres, logger)
		if err != nil {
			return stores{}, 0, err
		}
		if err := createNamespace(o, &pg.Default); err != nil {
			return stores{}, 0, fmt.Errorf("register temporal namespace %q in PostgreSQL database %q at %s: %w", o.Namespace, pg.Default.DatabaseName, pg.Default.ConnectAddr, err)
		}
		return stores{name: "postgres", defaultStore: pg.Default, visib: pg.Visibility}, newDBShards, nil
	}
	sqlConf, shards, err := openSQLite(o)
	if err != nil {
		return stores{}, 0, err
	}
	return stores{name: "sqlite", defaultStore: sqlConf, visib: sqlConf}, shards, nil
}

// createNamespace registers the namespace with its Keyword search
// attributes directly in the default store before the server starts (so
// its namespace registry finds it at once); an existing namespace is left
// as it is. The function lives in Temporal's sqlite schema package but
// works on any SQL plugin's store (it goes through sql.NewSQLDB).
func createNamespace(o Options, sqlConf *config.SQL) error {
	sas := map[string]enumspb.IndexedValueType{}
	for _, n := range o.SearchAttributes {
		sas[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	nsConf, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, sas)
	if err != nil {
		return err
	}
	return sqliteschema.CreateNamespaces(sqlConf, nsConf)
}

func openSQLite(o Options) (config.SQL, int32, error) {
	sqlConf := config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	shards := int32(newDBShards)
	if o.DBPath == "" {
		sqlConf.DatabaseName = fmt.Sprintf("joinery-%d", time.Now().UnixNano())
		sqlConf.ConnectAttributes["mode"] = "memory"
		sqlConf.ConnectAttributes["cache"] = "shared"
	} else {
		if err := os.MkdirAll(filepath.Dir(o.DBPath), 0o755); err != nil {
			return config.SQL{}, 0, err
		}
		sqlConf.DatabaseName = o.DBPath
		sqlConf.ConnectAttributes["mode"] = "rwc"
		sqlConf.ConnectAttributes["journal_mode"] = "wal"
		// In WAL mode, synchronous=normal syncs the log at checkpoints, not
		// at every commit: a crash of the process loses nothing (a power
		// loss may lose the last commits), and the one connection the
		// plugin opens is no longer held by an fsync per write.
		sqlConf.ConnectAttributes["synchronous"] = "normal"
		if _, err := os.Stat(o.DBPath); errors.Is(err, os.ErrNotExist) {
			if err := sqliteschema.SetupSchema(&sqlConf); err != nil {
				return config.SQL{}, 0, fmt.Errorf("create temporal schema in %s: %w", o.DBPath, err)
			}
			if err := os.WriteFile(o.DBPath+shardsSuffix, []byte(strconv.Itoa(newDBShards)), 0o644); err != nil {
				return config.SQL{}, 0, err
			}
		}
		shards = dbShards(o.DBPath)
	}
	if err := createNamespace(o, &sqlConf); err != nil {
		return config.SQL{}, 0, fmt.Errorf("temporal state in %s is unusable (%v): remove it or run with --fresh", o.DBPath, err)
	}
	return sqlConf, shards, nil
}

// serverConfig is the server's static configuration: one cluster, all
// services on loopback, archival off.
func serverConfig(o Options, frontend string, ports []int, st stores, shards int32) *config.Config {
	host := loopback
	defaultName, visName := st.name+"-default", st.name+"-visibility"
	if st.name == "sqlite" {
		visName = defaultName // one file holds both
	}
	dataStores := map[string]config.DataStore{defaultName: {SQL: &st.defaultStore}}
	if visName != defaultName {
		dataStores[visName] = config.DataStore{SQL: &st.visib}
	}
	return &config.Config{
		Global: config.Global{Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host}},
		Persistence: config.Persistence{
			DefaultStore: defaultName, VisibilityStore: visName, NumHistoryShards: shards,
			DataStores: dataStores,
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace: false, FailoverVersionIncrement: 10,
			MasterClusterName: "active", CurrentClusterName: "active",
			ClusterInformation: map[string]cluster.ClusterInformation{"active": {
				Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend,
				HTTPAddress: fmt.Sprintf("%s:%d", host, ports[0]), ClusterID: clusterID,
			}},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			"frontend": {RPC: config.RPC{GRPCPort: o.FrontendPort, HTTPPort: ports[0], BindOnIP: host}},
			"history":  {RPC: config.RPC{GRPCPort: ports[1], BindOnIP: host}},
			"matching": {RPC: config.RPC{GRPCPort: ports[2], BindOnIP: host}},
			"worker":   {RPC: config.RPC{GRPCPort: ports[3], BindOnIP: host}},
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History: config.HistoryArchivalNamespaceDefaults{State: "disabled"}, Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

func newServer(o Options, conf *config.Config, ports []int, logger log.Logger) (temporal.Server, error) {
	host := loopback
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key():      true,
		dynamicconfig.FrontendPersistenceMaxQPS.Key():                    10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():                     45000,
		dynamicconfig.EnableServerVersionCheck.Key():                     false, // no phone-home
	}
	hostOf := func(p int) static.Hosts { return static.SingleLocalHost(fmt.Sprintf("%s:%d", host, p)) }
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: hostOf(o.FrontendPort),
			primitives.HistoryService:  hostOf(ports[1]),
			primitives.MatchingService: hostOf(ports[2]),
			primitives.WorkerService:   hostOf(ports[3]),
		}),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	return srv, nil
}

// ensureSearchAttributes adds any missing search attribute: CreateNamespaces
// skips an existing namespace, so attributes added to the code later would
// otherwise never reach an old DB file.
func (s *Server) ensureSearchAttributes(ctx context.Context) error {
	c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: s.opts.Namespace, Logger: logging.NopTemporal()})
	if err != nil {
		return fmt.Errorf("temporal server not reachable: %w", err)
	}
	defer c.Close()
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.opts.Namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, n := range s.opts.SearchAttributes {
		if _, ok := resp.CustomAttributes[n]; !ok {
			missing[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: s.opts.Namespace, SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// Stop stops the Web UI and the server (about a second).
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.Stop()
	}
	s.srv.Stop()
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}
