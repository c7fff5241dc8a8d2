package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.Resource                   = (*triggerResource)(nil)
	_ resource.ResourceWithConfigure      = (*triggerResource)(nil)
	_ resource.ResourceWithImportState    = (*triggerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*triggerResource)(nil)
)

// NewTriggerResource is the sless_trigger resource.
func NewTriggerResource() resource.Resource { return &triggerResource{} }

type triggerResource struct{ client *Client }

type triggerModel struct {
	ID          types.String  `tfsdk:"id"`
	Name        types.String  `tfsdk:"name"`
	Type        types.String  `tfsdk:"type"`
	Function    types.String  `tfsdk:"function"`
	Enabled     types.Bool    `tfsdk:"enabled"`
	Schedule    types.String  `tfsdk:"schedule"`
	Timezone    types.String  `tfsdk:"timezone"`
	Payload     types.String  `tfsdk:"payload"`
	PrewarmS    types.Float64 `tfsdk:"prewarm_s"`
	URLSecret   types.String  `tfsdk:"url_secret"`
	Queue       types.String  `tfsdk:"queue"`
	Exchange    types.String  `tfsdk:"exchange"`
	RoutingKey  types.String  `tfsdk:"routing_key"`
	Prefetch    types.Int64   `tfsdk:"prefetch"`
	MaxAttempts types.Int64   `tfsdk:"max_attempts"`
}

// deleteWait bounds how long destroy waits for a deleted trigger to be gone.
var deleteWait = 5 * time.Minute

func (r *triggerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
}

func optionalComputedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true, Computed: true, Description: desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

func optionalComputedInt(desc string, v ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{
		Optional: true, Computed: true, Description: desc, Validators: v,
		PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
	}
}

func (r *triggerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A trigger that runs a function: `http`, `cron` (on a schedule) or `rabbitmq` (on a message). " +
			"`enabled` toggles it in place; destroy waits until the trigger is gone. Attributes of another type are refused.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, Description: "The trigger's name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, Description: "Trigger name (DNS-1123 label). Changing it replaces the trigger.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{nameValidator()},
			},
			"type": schema.StringAttribute{
				Required: true, Description: "`http`, `cron` or `rabbitmq`. Changing it replaces the trigger.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringvalidator.OneOf("http", "cron", "rabbitmq")},
			},
			"function": schema.StringAttribute{
				Required: true, Description: "Name of the function the trigger runs (e.g. `sless_function.x.name`).",
				Validators: []validator.String{nameValidator()},
			},
			"enabled": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Whether the trigger fires. Default true; toggled in place.",
			},
			"schedule": schema.StringAttribute{
				Optional: true, Description: "cron: a five-field cron expression, e.g. `*/5 * * * *`. Required for cron.",
			},
			"timezone": optionalComputedString("cron: IANA time zone of the schedule, e.g. `Europe/Berlin`. The gateway's default (UTC) when unset."),
			"payload": schema.StringAttribute{
				Optional: true, Description: "cron: the event body each tick sends, as JSON (`jsonencode({...})`).",
				Validators: []validator.String{jsonValidator{}},
			},
			"prewarm_s": schema.Float64Attribute{
				Optional: true, Computed: true,
				Description:   "cron: start the function this many seconds before each tick, so the run sees no cold start (0-3600). The gateway's default (0) when unset.",
				Validators:    []validator.Float64{float64validator.Between(0, 3600)},
				PlanModifiers: []planmodifier.Float64{float64planmodifier.UseStateForUnknown()},
			},
			"url_secret": schema.StringAttribute{
				Optional: true, Sensitive: true,
				Description: "rabbitmq: the broker URL secret (`amqp://...`). Stored as a secret by the gateway and never read back.",
			},
			"queue": schema.StringAttribute{
				Optional: true, Description: "rabbitmq: the queue to consume (or `exchange` + `routing_key`).",
			},
			"exchange":     schema.StringAttribute{Optional: true, Description: "rabbitmq: exchange to bind a queue to."},
			"routing_key":  schema.StringAttribute{Optional: true, Description: "rabbitmq: routing key of the binding."},
			"prefetch":     optionalComputedInt("rabbitmq: messages in flight per consumer.", int64validator.AtLeast(1)),
			"max_attempts": optionalComputedInt("rabbitmq: attempts before a message goes to the dead-letter queue.", int64validator.AtLeast(1)),
		},
	}
}

// ValidateConfig checks the attributes each trigger type needs and refuses the others'.
func (r *triggerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m triggerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(validateTrigger(&m)...)
}

func validateTrigger(m *triggerModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if m.Type.IsUnknown() || m.Type.IsNull() {
		return diags
	}
	set := func(v interface{ IsNull() bool }) bool { return !v.IsNull() }
	cronOnly := map[string]bool{"schedule": set(m.Schedule), "timezone": set(m.Timezone), "payload": set(m.Payload), "prewarm_s": set(m.PrewarmS)}
	rabbitOnly := map[string]bool{"url_secret": set(m.URLSecret), "queue": set(m.Queue), "exchange": set(m.Exchange),
		"routing_key": set(m.RoutingKey), "prefetch": set(m.Prefetch), "max_attempts": set(m.MaxAttempts)}
	typ := m.Type.ValueString()
	refuse := func(attrs map[string]bool) {
		for name, isSet := range attrs {
			if isSet {
				diags.AddAttributeError(path.Root(name), "Attribute not valid for this trigger type",
					fmt.Sprintf("%s is not an attribute of a %s trigger", name, typ))
			}
		}
	}
	switch typ {
	case "http":
		refuse(cronOnly)
		refuse(rabbitOnly)
	case "cron":
		refuse(rabbitOnly)
		if m.Schedule.IsNull() {
			diags.AddAttributeError(path.Root("schedule"), "Missing schedule", "a cron trigger needs schedule, e.g. \"*/5 * * * *\"")
		}
	case "rabbitmq":
		refuse(cronOnly)
		if m.URLSecret.IsNull() {
			diags.AddAttributeError(path.Root("url_secret"), "Missing url_secret", "a rabbitmq trigger needs url_secret")
		}
		if m.Queue.IsNull() && m.Exchange.IsNull() {
			diags.AddAttributeError(path.Root("queue"), "Missing queue", "a rabbitmq trigger needs queue, or exchange and routing_key")
		}
		if !m.Queue.IsNull() && !m.Exchange.IsNull() {
			diags.AddAttributeError(path.Root("exchange"), "Conflicting attributes", "set queue, or exchange and routing_key, not both")
		}
	}
	return diags
}

func (r *triggerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	r.client = c
}

func strPtr(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

func intPtr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	i := v.ValueInt64()
	return &i
}

// triggerBody is the PUT body for the model.
func triggerBody(m *triggerModel) (Trigger, error) {
	enabled := m.Enabled.IsNull() || m.Enabled.IsUnknown() || m.Enabled.ValueBool()
	payload, err := decodeJSONAttr(m.Payload)
	if err != nil {
		return Trigger{}, fmt.Errorf("payload: %w", err)
	}
	return Trigger{
		Type: m.Type.ValueString(), Function: m.Function.ValueString(), Enabled: &enabled,
		Schedule: strPtr(m.Schedule), Timezone: strPtr(m.Timezone), Payload: payload, PrewarmS: floatPtr(m.PrewarmS),
		URLSecret: strPtr(m.URLSecret), Queue: strPtr(m.Queue), Exchange: strPtr(m.Exchange),
		RoutingKey: strPtr(m.RoutingKey), Prefetch: intPtr(m.Prefetch), MaxAttempts: intPtr(m.MaxAttempts),
	}, nil
}

func floatPtr(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	f := v.ValueFloat64()
	return &f
}

func floatFromRemote(prior types.Float64, remote *float64) types.Float64 {
	if remote == nil {
		if prior.IsUnknown() {
			return types.Float64Null()
		}
		return prior
	}
	return types.Float64Value(*remote)
}

func strFromRemote(prior types.String, remote *string) types.String {
	if remote == nil {
		if prior.IsUnknown() {
			return types.StringNull()
		}
		return prior
	}
	return types.StringValue(*remote)
}

func intFromRemote(prior types.Int64, remote *int64) types.Int64 {
	if remote == nil {
		if prior.IsUnknown() {
			return types.Int64Null()
		}
		return prior
	}
	return types.Int64Value(*remote)
}

// applyTrigger copies the gateway's view into the model. Optional attributes the gateway
// leaves out of its answer keep their configured value; url_secret is never read back.
func applyTrigger(m *triggerModel, name string, v *TriggerView) {
	t := v.Effective()
	m.ID = types.StringValue(name)
	m.Name = types.StringValue(name)
	if t.Type != "" {
		m.Type = types.StringValue(t.Type)
	}
	if t.Function != "" {
		m.Function = types.StringValue(t.Function)
	}
	if t.Enabled != nil {
		m.Enabled = types.BoolValue(*t.Enabled)
	} else if m.Enabled.IsNull() || m.Enabled.IsUnknown() {
		m.Enabled = types.BoolValue(true)
	}
	if m.Type.ValueString() == "cron" {
		m.Schedule = strFromRemote(m.Schedule, t.Schedule)
		m.Timezone = strFromRemote(m.Timezone, t.Timezone)
		m.PrewarmS = floatFromRemote(m.PrewarmS, t.PrewarmS)
		m.Payload = jsonAttrFromRemote(m.Payload, t.Payload)
	} else {
		m.Timezone = nullIfUnknown(m.Timezone)
		if m.PrewarmS.IsUnknown() {
			m.PrewarmS = types.Float64Null()
		}
	}
	if m.Type.ValueString() == "rabbitmq" {
		m.Queue = strFromRemote(m.Queue, t.Queue)
		m.Exchange = strFromRemote(m.Exchange, t.Exchange)
		m.RoutingKey = strFromRemote(m.RoutingKey, t.RoutingKey)
		m.Prefetch = intFromRemote(m.Prefetch, t.Prefetch)
		m.MaxAttempts = intFromRemote(m.MaxAttempts, t.MaxAttempts)
	} else {
		m.Prefetch = nullIntIfUnknown(m.Prefetch)
		m.MaxAttempts = nullIntIfUnknown(m.MaxAttempts)
	}
}

func nullIfUnknown(v types.String) types.String {
	if v.IsUnknown() {
		return types.StringNull()
	}
	return v
}

func nullIntIfUnknown(v types.Int64) types.Int64 {
	if v.IsUnknown() {
		return types.Int64Null()
	}
	return v
}

func (r *triggerResource) put(ctx context.Context, m *triggerModel, diags *diag.Diagnostics) bool {
	body, err := triggerBody(m)
	if err != nil {
		diags.AddAttributeError(path.Root("payload"), "Invalid payload", err.Error())
		return false
	}
	name := m.Name.ValueString()
	v, err := r.client.PutTrigger(ctx, name, body)
	if err != nil {
		diags.AddError("Cannot put trigger "+name, apiMessage(err))
		return false
	}
	applyTrigger(m, name, v)
	return true
}

func (r *triggerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	if _, err := r.client.GetTrigger(ctx, name); err == nil {
		resp.Diagnostics.AddError("Trigger already exists",
			fmt.Sprintf("A trigger %q already exists in namespace %s. Import it with: terraform import <address> %s", name, r.client.Namespace, name))
		return
	} else if !IsNotFound(err) || IsRouteNotFound(err) {
		resp.Diagnostics.AddError("Cannot read trigger "+name, triggerRouteHint(err))
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// triggerRouteHint explains a gateway without the triggers API.
func triggerRouteHint(err error) string {
	if IsRouteNotFound(err) {
		return apiMessage(err) + " (this sless gateway does not serve the triggers/jobs API: upgrade it)"
	}
	return apiMessage(err)
}

func (r *triggerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	v, err := r.client.GetTrigger(ctx, name)
	if IsNotFound(err) && !IsRouteNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read trigger "+name, triggerRouteHint(err))
		return
	}
	applyTrigger(&state, name, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *triggerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *triggerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	if err := r.client.DeleteTrigger(ctx, name); err != nil {
		if IsNotFound(err) && !IsRouteNotFound(err) {
			return
		}
		resp.Diagnostics.AddError("Cannot delete trigger "+name, triggerRouteHint(err))
		return
	}
	deadline := time.Now().Add(deleteWait)
	for {
		_, err := r.client.GetTrigger(ctx, name)
		if IsNotFound(err) {
			return
		}
		if err != nil {
			resp.Diagnostics.AddError("Cannot read trigger "+name+" while waiting for its deletion", apiMessage(err))
			return
		}
		if time.Now().After(deadline) {
			resp.Diagnostics.AddError("Trigger "+name+" is not gone", fmt.Sprintf("it still exists %s after DELETE", deleteWait))
			return
		}
		select {
		case <-ctx.Done():
			resp.Diagnostics.AddError("Interrupted", ctx.Err().Error())
			return
		case <-time.After(pollInterval):
		}
	}
}

func (r *triggerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
