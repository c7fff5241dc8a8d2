package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const defaultInterface = "sless"

// defaultEntrypoints is the gateway's table of the entrypoint a spec without one gets
// (sless/models/interfaces.py DEFAULT_ENTRYPOINTS): where each peer's tooling puts the
// handler. A pair not listed gets defaultEntrypoint.
var defaultEntrypoints = map[[2]string]string{
	{"python3.11", "lambda"}:  "lambda_function.lambda_handler",
	{"nodejs20", "lambda"}:    "index.handler",
	{"python3.11", "knative"}: "function.func.new",
	{"nodejs20", "knative"}:   "index.handle",
	{"python3.11", "asgi"}:    "app.app",
	{"python3.11", "wsgi"}:    "app.app",
}

func interfaceNames() []string {
	return []string{"sless", "lambda", "openfaas", "knative", "asgi", "wsgi"}
}

// interfaceEntrypoint plans the entrypoint the gateway will store when the configuration
// names none: the default of the planned runtime and interface, so that a plan shows what
// runs and changing the interface moves the default with it.
type interfaceEntrypoint struct{}

func (interfaceEntrypoint) Description(context.Context) string {
	return "without a configured entrypoint, the default of the runtime and interface"
}

func (m interfaceEntrypoint) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (interfaceEntrypoint) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	var runtime, iface types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("runtime"), &runtime)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("interface"), &iface)...)
	if runtime.IsUnknown() || iface.IsUnknown() {
		resp.PlanValue = types.StringUnknown()
		return
	}
	resp.PlanValue = types.StringValue(entrypointFor(runtime.ValueString(), iface.ValueString()))
}

func entrypointFor(runtime, iface string) string {
	if found, ok := defaultEntrypoints[[2]string{runtime, iface}]; ok {
		return found
	}
	return defaultEntrypoint
}
