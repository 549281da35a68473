package temporal

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/sim/internal/freeport"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	pgv12 "go.temporal.io/server/schema/postgresql/v12"
	sqltool "go.temporal.io/server/tools/sql"
)

func TestParsePostgresDSN(t *testing.T) {
	s, err := ParsePostgresDSN("postgres://temporal:s3cr%2Ft@db.example.com:6543/jt?sslmode=verify-full&sslrootcert=/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	d, v := s.Default, s.Visibility
	if d.PluginName != "postgres12" || d.User != "temporal" || d.Password != "s3cr/t" || d.ConnectAddr != "db.example.com:6543" ||
		d.DatabaseName != "jt" || v.DatabaseName != "jt_visibility" || v.ConnectAddr != d.ConnectAddr ||
		d.ConnectAttributes["sslmode"] != "verify-full" || v.ConnectAttributes["sslrootcert"] != "/ca.pem" || len(d.ConnectAttributes) != 2 {
		t.Errorf("default %+v, visibility %+v", d, v)
	}
	// Defaults: port 5432, database temporal; postgresql:// is the same scheme.
	s, err = ParsePostgresDSN("postgresql://u@localhost")
	if err != nil {
		t.Fatal(err)
	}
	if s.Default.ConnectAddr != "localhost:5432" || s.Default.DatabaseName != "temporal" || s.Visibility.DatabaseName != "temporal_visibility" || s.Default.Password != "" {
		t.Errorf("defaults: %+v", s.Default)
	}
	for dsn, reason := range map[string]string{
		"mysql://u:pw@h/db":                        `scheme "mysql"`,
		"postgres://u:pw@/db":                      "no host",
		"postgres://h:5432/db":                     "no user",
		"postgres://u:pw@h/a/b":                    `database name "a/b"`,
		"postgres://u:pw@h/db?sslmode=a&sslmode=b": "parameter sslmode given 2 times",
		"host=h user=u":                            `scheme ""`,
	} {
		_, err := ParsePostgresDSN(dsn)
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: error %v, want %q", dsn, err, reason)
			continue
		}
		if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: error shows the password: %v", dsn, err)
		}
	}
	if got := RedactDSN("postgres://u:secret@h:1/db?sslmode=disable"); got != "postgres://u:xxxxx@h:1/db?sslmode=disable" {
		t.Errorf("RedactDSN = %s", got)
	}
}

// testPostgresDSN is JOINERY_TEST_POSTGRES with its own database, so this
// test and the integration tests never share state.
func testPostgresDSN(t *testing.T, db string) string {
	t.Helper()
	dsn := os.Getenv("JOINERY_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("JOINERY_TEST_POSTGRES is unset: set it to a PostgreSQL DSN whose user may create databases (hack/postgres.sh start DIR prints one) to run the embedded server on PostgreSQL")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("JOINERY_TEST_POSTGRES: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

// The server on PostgreSQL: both databases are created and carry the
// schema versions the server module embeds, the namespace and search
// attributes are registered, and a restart keeps a running workflow with
// its search attributes (nothing polls its task queue, so it stays open).
func TestServerOnPostgresKeepsWorkflowsAcrossRestart(t *testing.T) {
	dsn := testPostgresDSN(t, "joinery_simtest")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := WipePostgres(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	testRestartKeepsWorkflows(ctx, t, Options{Postgres: dsn}, func() {
		stores, _ := ParsePostgresDSN(dsn)
		for _, c := range []struct {
			cfg  config.SQL
			want string
		}{{stores.Default, pgv12.Version}, {stores.Visibility, pgv12.VisibilityVersion}} {
			got, err := schemaVersion(c.cfg)
			if err != nil || got != c.want {
				t.Errorf("schema version of %s = %q (%v), want %q", c.cfg.DatabaseName, got, err, c.want)
			}
		}
	})
}

// The same on SQLite: the file keeps the workflow across a restart.
func TestServerOnSQLiteKeepsWorkflowsAcrossRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	testRestartKeepsWorkflows(ctx, t, Options{DBPath: t.TempDir() + "/temporal.db"}, func() {})
}

func testRestartKeepsWorkflows(ctx context.Context, t *testing.T, o Options, checkStore func()) {
	t.Helper()
	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	o.FrontendPort, o.UIPort = ports[0], -1
	o.SearchAttributes = []string{"NodePool", "NodeName"}
	o.LogFile = t.TempDir() + "/temporal.log"
	srv, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	checkStore()

	tc, err := client.Dial(client.Options{HostPort: srv.Address, Logger: logging.NopTemporal()})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	pool := temporal.NewSearchAttributeKeyKeyword("NodePool")
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "nodeclaim/restart-1", TaskQueue: "nobody-polls",
		TypedSearchAttributes: temporal.NewSearchAttributes(pool.ValueSet("general-purpose")),
	}, "NodeClaim")
	if err != nil {
		t.Fatal(err)
	}
	waitListed(ctx, t, tc, `NodePool = "general-purpose"`, run.GetRunID())

	srv, err = srv.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := describeRetrying(ctx, tc, "nodeclaim/restart-1")
	if err != nil {
		t.Fatal(err)
	}
	if info := d.WorkflowExecutionInfo; info.Execution.RunId != run.GetRunID() || info.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("after restart: run %s status %s, want run %s running", info.Execution.RunId, info.Status, run.GetRunID())
	}
	waitListed(ctx, t, tc, `NodePool = "general-purpose"`, run.GetRunID())
}

// schemaVersion is the version Temporal's schema tool recorded.
func schemaVersion(cfg config.SQL) (string, error) {
	conn, err := sqltool.NewConnection(&cfg, log.NewNoopLogger())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ReadSchemaVersion()
}

// waitListed waits until visibility lists the run for query (visibility is
// written after the start returns).
func waitListed(ctx context.Context, t *testing.T, tc client.Client, query, runID string) {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && len(resp.Executions) == 1 && resp.Executions[0].Execution.RunId == runID {
			return
		}
		last = fmt.Sprintf("%v (err %v)", resp, err)
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s never listed run %s: last answer %s", query, runID, last)
}

// describeRetrying describes a workflow once the restarted server answers.
func describeRetrying(ctx context.Context, tc client.Client, id string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	for {
		d, err := tc.DescribeWorkflowExecution(ctx, id, "")
		if err == nil || ctx.Err() != nil {
			return d, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
