import { HTTP_ACTION_METHODS, type HttpActionMethod, type ToolSource } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Pencil, Plus, Trash2 } from "lucide-react";
import { useId, useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { Field, Input, Select, Textarea } from "../../components/ui/input.tsx";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import {
  type ActionDraft,
  blankAction,
  type CredentialChoice,
  errorsOfApi,
  type FormErrors,
  formOf,
  patchOf,
  type SourceForm,
} from "./source-form.ts";

/** A field's error under it, tied to the control by `aria-describedby`. */
function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message ? (
    <span id={id} className="text-destructive text-xs" role="alert">
      {message}
    </span>
  ) : null;
}

/**
 * Edits a tool source (owners and admins, through `PATCH /api/tool-sources/:id`): its URL, price
 * per call, whether it is on, its static credential (replaced or removed; its value is never
 * shown, only whether one is set), an HTTP source's actions (added, edited, removed; an OpenAPI
 * import replaces them all from the card) and an MCP server's tools marked read or write. Only what changed is sent; the API's refusal
 * shows beside the field it names.
 */
export function SourceEditorDialog({ source }: { source: ToolSource }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [form, setForm] = useState<SourceForm>(() => formOf(source));
  const [errors, setErrors] = useState<FormErrors>({});
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<SourceForm>) => setForm((before) => ({ ...before, ...change }));
  const setAction = (index: number, change: Partial<ActionDraft>) =>
    setForm((before) => ({
      ...before,
      actions: before.actions.map((action, i) => (i === index ? { ...action, ...change } : action)),
    }));
  const described = (field: string) =>
    errors[field] ? { "aria-describedby": `${id}-${field}`, "aria-invalid": true } : {};

  const save = async () => {
    const checked = patchOf(source, form);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setErrors({});
    if (checked.patch === null) {
      setOpen(false);
      return;
    }
    setBusy(true);
    try {
      const saved = await toolsApi.update(source.id, checked.patch);
      toast.success(`${saved.name} saved`);
      await queryClient.invalidateQueries({ queryKey: toolSourcesKey(source.orgId) });
      setOpen(false);
    } catch (caught) {
      setErrors(errorsOfApi(caught));
    } finally {
      setBusy(false);
    }
  };

  const credentialChoices: [CredentialChoice, string][] = source.credential
    ? [
        ["keep", "Keep it"],
        ["replace", "Replace it"],
        ["remove", "Remove it"],
      ]
    : [
        ["keep", "None"],
        ["replace", "Add one"],
      ];

  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (next) setForm(formOf(source));
        setErrors({});
      }}
    >
      <DialogTrigger asChild>
        <Button size="sm" aria-label={`Edit ${source.name}`}>
          <Pencil aria-hidden="true" />
          Edit
        </Button>
      </DialogTrigger>
      <DialogContent
        title={`Edit ${source.name}`}
        description="A change of URL, credential or switch applies to the next call: calls under way with the old settings are refused."
      >
        <form
          className="grid gap-4"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void save();
          }}
        >
          <label className="flex items-center gap-2 text-sm">
            <input
              type="checkbox"
              checked={form.enabled}
              onChange={(event) => set({ enabled: event.target.checked })}
            />
            <span>On: profiles that switch its tools on may call them</span>
          </label>
          <Field label={source.kind === "mcp" ? "MCP server URL" : "Base URL"}>
            <Input
              value={form.url}
              inputMode="url"
              onChange={(event) => set({ url: event.target.value })}
              {...described("url")}
            />
            <FieldError id={`${id}-url`} message={errors.url} />
          </Field>
          <Field label="Price per call (dollars)" hint="Charged to your org per call, 0 for free">
            <Input
              value={form.price}
              inputMode="decimal"
              onChange={(event) => set({ price: event.target.value })}
              {...described("price")}
            />
            <FieldError id={`${id}-price`} message={errors.price} />
          </Field>
          <fieldset className="grid gap-2">
            <legend className="mb-1 font-medium text-sm">Static credential</legend>
            <p className="text-muted-foreground text-xs">
              {source.credential
                ? `Set: sent as the ${source.credential.header} header. Its value is never shown.`
                : "Not set."}
            </p>
            <div className="flex flex-wrap gap-4 text-sm">
              {credentialChoices.map(([value, label]) => (
                <label key={value} className="flex items-center gap-2">
                  <input
                    type="radio"
                    name={`${id}-credential`}
                    value={value}
                    checked={form.credential === value}
                    onChange={() => set({ credential: value })}
                  />
                  {label}
                </label>
              ))}
            </div>
            {form.credential === "replace" ? (
              <div className="grid gap-3 sm:grid-cols-2">
                <Field label="Header">
                  <Input
                    value={form.header}
                    placeholder="X-Api-Key"
                    autoComplete="off"
                    onChange={(event) => set({ header: event.target.value })}
                    {...described("header")}
                  />
                  <FieldError id={`${id}-header`} message={errors.header} />
                </Field>
                <Field label="New value">
                  <Input
                    type="password"
                    value={form.secret}
                    autoComplete="new-password"
                    onChange={(event) => set({ secret: event.target.value })}
                    {...described("secret")}
                  />
                  <FieldError id={`${id}-secret`} message={errors.secret} />
                </Field>
              </div>
            ) : null}
          </fieldset>
          {source.kind === "http" ? (
            <fieldset className="grid gap-3">
              <legend className="mb-1 font-medium text-sm">Actions</legend>
              {form.actions.length === 0 ? (
                <p className="text-muted-foreground text-xs">No actions.</p>
              ) : null}
              {form.actions.map((action, index) => (
                <ActionFields
                  key={action.key}
                  action={action}
                  index={index}
                  errors={errors}
                  idPrefix={id}
                  onChange={(change) => setAction(index, change)}
                  onRemove={() => set({ actions: form.actions.filter((_, i) => i !== index) })}
                />
              ))}
              <div>
                <Button
                  size="sm"
                  onClick={() => set({ actions: [...form.actions, blankAction()] })}
                >
                  <Plus aria-hidden="true" />
                  Add action
                </Button>
              </div>
            </fieldset>
          ) : null}
          {source.kind === "mcp" && Object.keys(form.marks).length > 0 ? (
            <fieldset className="grid min-w-0 gap-2">
              <legend className="mb-1 font-medium text-sm">Read or write</legend>
              <p className="text-muted-foreground text-xs">
                A write asks the person in the chat before each call. The server's own mark applies
                unless you set one.
              </p>
              {Object.entries(form.marks).map(([name, mark]) => (
                <Field key={name} label={name} className="font-mono">
                  <Select
                    value={mark}
                    onChange={(event) =>
                      set({
                        marks: { ...form.marks, [name]: event.target.value as typeof mark },
                      })
                    }
                  >
                    <option value="server">The server's mark</option>
                    <option value="read">Read</option>
                    <option value="write">Write (asks first)</option>
                  </Select>
                </Field>
              ))}
              <FieldError id={`${id}-access`} message={errors.access} />
            </fieldset>
          ) : null}
          {errors.form ? (
            <p className="text-destructive text-sm" role="alert">
              {errors.form}
            </p>
          ) : null}
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={busy}>
              {busy ? "Saving…" : "Save"}
            </Button>
          </div>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/** One HTTP action's fields, with the errors the form or the API put on them. */
function ActionFields({
  action,
  index,
  errors,
  idPrefix,
  onChange,
  onRemove,
}: {
  action: ActionDraft;
  index: number;
  errors: FormErrors;
  idPrefix: string;
  onChange: (change: Partial<ActionDraft>) => void;
  onRemove: () => void;
}) {
  const at = (field: string) => `actions.${index}.${field}`;
  const error = (field: string) => errors[at(field)];
  const described = (field: string) =>
    error(field)
      ? { "aria-describedby": `${idPrefix}-${at(field)}`, "aria-invalid": true as const }
      : {};
  return (
    <fieldset
      className="grid min-w-0 gap-3 rounded-md border border-border p-3"
      aria-label={`Action ${index + 1}${action.name ? `: ${action.name}` : ""}`}
    >
      <div className="grid gap-3 sm:grid-cols-[1fr_7rem_7rem]">
        <Field label="Name">
          <Input
            value={action.name}
            className="font-mono"
            onChange={(event) => onChange({ name: event.target.value })}
            {...described("name")}
          />
          <FieldError id={`${idPrefix}-${at("name")}`} message={error("name")} />
        </Field>
        <Field label="Method">
          <Select
            value={action.method}
            onChange={(event) => onChange({ method: event.target.value as HttpActionMethod })}
          >
            {HTTP_ACTION_METHODS.map((method) => (
              <option key={method}>{method}</option>
            ))}
          </Select>
        </Field>
        <Field label="Access">
          <Select
            value={action.access}
            onChange={(event) => onChange({ access: event.target.value as "read" | "write" })}
          >
            <option value="read">Read</option>
            <option value="write">Write (asks first)</option>
          </Select>
        </Field>
      </div>
      <Field label="Path" hint="On the source's host, {name} placeholders from the arguments">
        <Input
          value={action.path}
          className="font-mono"
          onChange={(event) => onChange({ path: event.target.value })}
          {...described("path")}
        />
        <FieldError id={`${idPrefix}-${at("path")}`} message={error("path")} />
      </Field>
      <Field label="Description">
        <Input
          value={action.description}
          onChange={(event) => onChange({ description: event.target.value })}
          {...described("description")}
        />
        <FieldError id={`${idPrefix}-${at("description")}`} message={error("description")} />
      </Field>
      <Field label="Arguments (JSON schema)">
        <Textarea
          value={action.schema}
          rows={4}
          className="font-mono text-xs"
          onChange={(event) => onChange({ schema: event.target.value })}
          {...described("inputSchema")}
        />
        <FieldError id={`${idPrefix}-${at("inputSchema")}`} message={error("inputSchema")} />
      </Field>
      <div>
        <Button
          size="sm"
          variant="ghost"
          onClick={onRemove}
          aria-label={`Remove action ${action.name || index + 1}`}
        >
          <Trash2 aria-hidden="true" />
          Remove
        </Button>
      </div>
    </fieldset>
  );
}
