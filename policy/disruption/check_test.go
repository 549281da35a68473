package disruption

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodBlock(t *testing.T) {
	until := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name      string
		pod       Pod
		allowBare bool
		want      BlockKind // "": no block
		msg       string    // substring of the message
	}{
		{"finished pod never blocks", Pod{Name: "ns/a", DoNotDisrupt: true, Reschedulable: false}, false, "", ""},
		{"do-not-disrupt", Pod{Name: "ns/a", Active: true, DoNotDisrupt: true, Controlled: true}, false, BlockDoNotDisruptPod, "ns/a has \"karpenter.sh/do-not-disrupt\" annotation"},
		{"do-not-disrupt until", Pod{Name: "ns/a", Active: true, DoNotDisrupt: true, DoNotDisruptUntil: until}, true, BlockDoNotDisruptPod, "until 2026-01-02T03:04:05Z"},
		{"bare pod", Pod{Name: "ns/b", Active: true, Reschedulable: true}, false, BlockNoController, "ns/b has no controller"},
		{"bare pod, operator's drain", Pod{Name: "ns/b", Active: true, Reschedulable: true}, true, "", ""},
		{"bare pod that is not rescheduled (daemon)", Pod{Name: "ns/d", Active: true}, false, "", ""},
		{"controlled pod", Pod{Name: "ns/c", Active: true, Reschedulable: true, Controlled: true}, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := PodBlock(c.pod, c.allowBare)
			switch {
			case c.want == "" && b != nil:
				t.Fatalf("blocks: %+v", *b)
			case c.want != "" && (b == nil || b.Kind != c.want || !strings.Contains(b.Message, c.msg)):
				t.Fatalf("got %+v, want %s with %q", b, c.want, c.msg)
			}
		})
	}
}

func TestNodeBlock(t *testing.T) {
	cases := []struct {
		annotations map[string]string
		blocks      bool
	}{
		{nil, false},
		{map[string]string{apiv1.AnnotationDoNotDisrupt: "true"}, true},
		{map[string]string{apiv1.AnnotationDoNotDisrupt: "false"}, false},
	}
	for _, c := range cases {
		if b := NodeBlock(c.annotations); (b != nil) != c.blocks || (b != nil && b.Kind != BlockDoNotDisruptNode) {
			t.Errorf("NodeBlock(%v) = %+v, want blocks=%v", c.annotations, b, c.blocks)
		}
	}
}

func TestBudgetBlocksAndRoomTake(t *testing.T) {
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	pool := func(nodes string) *apiv1.NodePool {
		np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
		np.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: nodes}}
		return np
	}
	cases := []struct {
		name  string
		np    *apiv1.NodePool
		pn    PoolNodes
		takes int      // Room.Take calls
		want  []string // substring of each Take's answer ("": allowed)
		block string   // substring of BudgetBlocks ("": allowed)
	}{
		{"room for two", pool("2"), PoolNodes{Nodes: 10}, 3, []string{"", "", "allows no more"}, ""},
		{"disrupting count against it", pool("2"), PoolNodes{Nodes: 10, Disrupting: 1}, 2, []string{"", "allows no more"}, ""},
		{"full", pool("1"), PoolNodes{Nodes: 10, Disrupting: 1}, 1, []string{"allows no more"}, "allows 1 node(s) at once and 1 are being disrupted"},
		{"percent rounds up", pool("10%"), PoolNodes{Nodes: 3}, 2, []string{"", "allows no more"}, ""},
		{"pool gone", nil, PoolNodes{}, 1, []string{"NodePool gp is gone"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			room := Room{}
			for i := 0; i < c.takes; i++ {
				got := room.Take("gp", c.np, c.pn, "underutilized", now)
				if (c.want[i] == "") != (got == "") || !strings.Contains(got, c.want[i]) {
					t.Fatalf("take %d: %q, want %q", i, got, c.want[i])
				}
			}
			if c.np == nil {
				return
			}
			if got := BudgetBlocks(c.np, c.pn, "underutilized", now); (c.block == "") != (got == "") || !strings.Contains(got, c.block) {
				t.Fatalf("BudgetBlocks: %q, want %q", got, c.block)
			}
		})
	}
}
