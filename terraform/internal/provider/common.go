package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func nameValidator() validator.String {
	return stringvalidator.RegexMatches(dns1123,
		"must be a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit")
}

func jsonUnmarshal(data []byte, out any) error { return json.Unmarshal(data, out) }

// decodeJSONAttr turns a JSON-string attribute (payload = jsonencode(...)) into a value.
func decodeJSONAttr(v types.String) (any, error) {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return nil, nil
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader([]byte(v.ValueString())))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonAttrFromRemote keeps the prior string when it means the same JSON as the remote
// value (so formatting never plans a diff), and encodes the remote value otherwise.
func jsonAttrFromRemote(prior types.String, remote any) types.String {
	if remote == nil {
		if prior.IsNull() || prior.IsUnknown() || prior.ValueString() == "" || prior.ValueString() == "null" {
			if prior.IsUnknown() {
				return types.StringNull()
			}
			return prior
		}
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		var a, b any
		if json.Unmarshal([]byte(prior.ValueString()), &a) == nil {
			raw, _ := json.Marshal(remote)
			if json.Unmarshal(raw, &b) == nil && reflect.DeepEqual(a, b) {
				return prior
			}
		}
	}
	raw, err := json.Marshal(remote)
	if err != nil {
		return types.StringNull()
	}
	return types.StringValue(string(raw))
}

// jsonValidator checks that a string attribute holds one JSON value.
type jsonValidator struct{}

func (jsonValidator) Description(context.Context) string {
	return "must be a JSON value (use jsonencode)"
}
func (v jsonValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (jsonValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if !json.Valid([]byte(req.ConfigValue.ValueString())) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid JSON", "The value must be JSON: write it with jsonencode(...).")
	}
}
