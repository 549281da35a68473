package deploy

import (
	"strings"
	"testing"
)

func TestRenderIAMPolicy(t *testing.T) {
	v := IAMPolicyVars{Partition: "aws", Region: "eu-west-1", AccountID: "111122223333", ClusterName: "prod",
		NodeRoleName: "KarpenterNodeRole-prod", InterruptionQueueName: "prod-q"}
	out, err := RenderIAMPolicy(IAMPolicyJSON(), v)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "${") {
		t.Errorf("placeholders left: %s", s)
	}
	for _, want := range []string{"arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", "arn:aws:sqs:eu-west-1:111122223333:prod-q", `"aws:RequestTag/joinery.sh/cluster": "prod"`} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered policy lacks %s", want)
		}
	}
	if _, err := RenderIAMPolicy([]byte(`{"a":"${CLUSTER} ${aws:username}"}`), v); err == nil || !strings.Contains(err.Error(), "unknown placeholder ${CLUSTER}") {
		t.Errorf("unknown placeholder: %v", err)
	}
	v.NodeRoleName = ""
	if _, err := RenderIAMPolicy(IAMPolicyJSON(), v); err == nil || !strings.Contains(err.Error(), "no value for ${NODE_ROLE_NAME}") {
		t.Errorf("empty value: %v", err)
	}
	if out, err := RenderIAMPolicy([]byte(`"${aws:username}"`), v); err != nil || string(out) != `"${aws:username}"` {
		t.Errorf("IAM variable: %s %v", out, err)
	}
}
