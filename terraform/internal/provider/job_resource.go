package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.Resource                = (*jobResource)(nil)
	_ resource.ResourceWithConfigure   = (*jobResource)(nil)
	_ resource.ResourceWithImportState = (*jobResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*jobResource)(nil)
)

// NewJobResource is the sless_job resource.
func NewJobResource() resource.Resource { return &jobResource{} }

type jobResource struct{ client *Client }

type jobModel struct {
	ID                types.String `tfsdk:"id"`
	Name              types.String `tfsdk:"name"`
	Function          types.String `tfsdk:"function"`
	Payload           types.String `tfsdk:"payload"`
	RunID             types.Int64  `tfsdk:"run_id"`
	WaitForCompletion types.Bool   `tfsdk:"wait_for_completion"`
	WaitTimeoutSec    types.Int64  `tfsdk:"wait_timeout_sec"`
	Phase             types.String `tfsdk:"phase"`
	Message           types.String `tfsdk:"message"`
	Result            types.String `tfsdk:"result"`
}

func (r *jobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (r *jobResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A job: one run of a function with a payload. `run_id` 0 runs nothing; raising it runs the " +
			"function once more (the same `run_id` never runs twice). Apply waits for the run to finish and " +
			"records its phase and result.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, Description: "The job's name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, Description: "Job name (DNS-1123 label). Changing it replaces the job.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{nameValidator()},
			},
			"function": schema.StringAttribute{
				Required: true, Description: "Name of the function the job runs.",
				Validators: []validator.String{nameValidator()},
			},
			"payload": schema.StringAttribute{
				Optional: true, Description: "The event body of the run, as JSON (`jsonencode({...})`).",
				Validators: []validator.String{jsonValidator{}},
			},
			"run_id": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(0),
				Description: "0 (the default): no run. A new, higher value runs the function once more.",
				Validators:  []validator.Int64{int64validator.AtLeast(0)},
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Wait until a started run has Succeeded or Failed (a Failed run fails the apply). Default true.",
			},
			"wait_timeout_sec": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(600),
				Description: "How long to wait for a run to finish. Default 600.",
				Validators:  []validator.Int64{int64validator.AtLeast(1)},
			},
			"phase": schema.StringAttribute{
				Computed: true, Description: "`Pending`, `Running`, `Succeeded` or `Failed` (empty before the first run).",
			},
			"message": schema.StringAttribute{Computed: true, Description: "The status message (why a run failed)."},
			"result": schema.StringAttribute{
				Computed: true, Description: "The result of the last run, as JSON (use `jsondecode`).",
			},
		},
	}
}

// ModifyPlan leaves the status as it is unless the run_id changes: changing only the
// function or the payload starts no run.
func (r *jobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state jobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(planJob(&plan, &state)...)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planJob is the plan logic of sless_job, apart from the framework for unit tests.
func planJob(plan, state *jobModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if plan.RunID.IsUnknown() {
		plan.Phase, plan.Message, plan.Result = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		return diags
	}
	if plan.RunID.ValueInt64() < state.RunID.ValueInt64() {
		diags.AddAttributeError(path.Root("run_id"), "run_id may only grow",
			fmt.Sprintf("run_id %d is lower than the last one, %d: a run_id never runs twice; raise it to run again",
				plan.RunID.ValueInt64(), state.RunID.ValueInt64()))
		return diags
	}
	if plan.RunID.ValueInt64() == state.RunID.ValueInt64() {
		plan.Phase, plan.Message, plan.Result = state.Phase, state.Message, state.Result
	} else {
		plan.Phase, plan.Message, plan.Result = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}
	return diags
}

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	r.client = c
}

func applyJob(m *jobModel, name string, v *JobView) {
	j := v.Effective()
	m.ID = types.StringValue(name)
	m.Name = types.StringValue(name)
	if j.Function != "" {
		m.Function = types.StringValue(j.Function)
	}
	m.RunID = types.Int64Value(j.RunID)
	m.Payload = jsonAttrFromRemote(m.Payload, j.Payload)
	m.Phase = types.StringValue(v.Status.Phase)
	m.Message = types.StringValue(v.Status.Text())
	m.Result = types.StringValue(v.Status.ResultJSON())
	if m.WaitForCompletion.IsNull() || m.WaitForCompletion.IsUnknown() {
		m.WaitForCompletion = types.BoolValue(true)
	}
	if m.WaitTimeoutSec.IsNull() || m.WaitTimeoutSec.IsUnknown() {
		m.WaitTimeoutSec = types.Int64Value(600)
	}
}

func (r *jobResource) put(ctx context.Context, m *jobModel, prevRunID int64, st stateSetter, diags *diag.Diagnostics) {
	payload, err := decodeJSONAttr(m.Payload)
	if err != nil {
		diags.AddAttributeError(path.Root("payload"), "Invalid payload", err.Error())
		return
	}
	name := m.Name.ValueString()
	v, err := r.client.PutJob(ctx, name, Job{Function: m.Function.ValueString(), RunID: m.RunID.ValueInt64(), Payload: payload})
	if err != nil {
		diags.AddError("Cannot put job "+name, triggerRouteHint(err))
		return
	}
	runs := m.RunID.ValueInt64() > 0 && m.RunID.ValueInt64() != prevRunID
	if runs && m.WaitForCompletion.ValueBool() {
		deadline := time.Now().Add(time.Duration(m.WaitTimeoutSec.ValueInt64()) * time.Second)
		interval := pollInterval
		for !v.Status.Done(m.RunID.ValueInt64()) {
			if time.Now().After(deadline) {
				applyJob(m, name, v)
				diags.Append(st.Set(ctx, m)...)
				diags.AddError("Job "+name+" did not finish",
					fmt.Sprintf("run %d is still %q after wait_timeout_sec (%ds)", m.RunID.ValueInt64(), v.Status.Phase, m.WaitTimeoutSec.ValueInt64()))
				return
			}
			select {
			case <-ctx.Done():
				diags.AddError("Interrupted", ctx.Err().Error())
				return
			case <-time.After(interval):
			}
			if interval < 3*time.Second {
				interval = interval * 3 / 2
			}
			if v, err = r.client.GetJob(ctx, name); err != nil {
				diags.AddError("Cannot read job "+name, apiMessage(err))
				return
			}
		}
	}
	applyJob(m, name, v)
	diags.Append(st.Set(ctx, m)...)
	if runs && m.WaitForCompletion.ValueBool() && v.Status.Phase == "Failed" {
		diags.AddError("Job "+name+" failed", fmt.Sprintf("run %d failed: %s\nresult: %s", m.RunID.ValueInt64(), v.Status.Text(), m.Result.ValueString()))
	}
}

func (r *jobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan jobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	if _, err := r.client.GetJob(ctx, name); err == nil {
		resp.Diagnostics.AddError("Job already exists",
			fmt.Sprintf("A job %q already exists in namespace %s. Import it with: terraform import <address> %s", name, r.client.Namespace, name))
		return
	} else if !IsNotFound(err) || IsRouteNotFound(err) {
		resp.Diagnostics.AddError("Cannot read job "+name, triggerRouteHint(err))
		return
	}
	r.put(ctx, &plan, 0, &resp.State, &resp.Diagnostics)
}

func (r *jobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state jobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.put(ctx, &plan, state.RunID.ValueInt64(), &resp.State, &resp.Diagnostics)
}

func (r *jobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state jobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	v, err := r.client.GetJob(ctx, name)
	if IsNotFound(err) && !IsRouteNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read job "+name, triggerRouteHint(err))
		return
	}
	applyJob(&state, name, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *jobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state jobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	if err := r.client.DeleteJob(ctx, name); err != nil && !(IsNotFound(err) && !IsRouteNotFound(err)) {
		resp.Diagnostics.AddError("Cannot delete job "+name, triggerRouteHint(err))
	}
}

func (r *jobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
