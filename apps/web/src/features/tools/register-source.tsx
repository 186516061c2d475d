import type { CreateToolSourceInput, HttpActionMethod, ToolAccess } from "@parley/shared";
import { HTTP_ACTION_METHODS } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import { useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { Field, Input, Select, Textarea } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import { dollarsToMicros, parseJsonObject } from "./source-words.ts";

type Kind = "mcp" | "http";

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

/**
 * Registers a tool source (owners and admins): an MCP server by its streamable HTTP URL (its tools
 * are listed at once), or an HTTP action (a base URL and one action written by hand; more come
 * from an OpenAPI import on the source). A price per call and a static credential are optional;
 * the credential is stored sealed and never shown again.
 */
export function RegisterSourceDialog({ orgId }: { orgId: string }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<Kind>("mcp");
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [price, setPrice] = useState("");
  const [header, setHeader] = useState("");
  const [secret, setSecret] = useState("");
  const [action, setAction] = useState({
    name: "",
    description: "",
    method: "GET" as HttpActionMethod,
    path: "/",
    access: "read" as ToolAccess,
    schema: EMPTY_SCHEMA,
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    const priceMicros = dollarsToMicros(price);
    if (priceMicros === null) {
      setError(new Error("The price must be a number of dollars, such as 0.01"));
      return;
    }
    const common = {
      name,
      url,
      description: description.trim() === "" ? null : description,
      priceMicros,
      credential: header.trim() !== "" ? { header: header.trim(), value: secret } : null,
    };
    let input: CreateToolSourceInput;
    if (kind === "mcp") {
      input = { kind: "mcp", ...common };
    } else {
      const schema = parseJsonObject(action.schema);
      if (!schema.ok) {
        setError(new Error(`The arguments schema ${schema.message}`));
        return;
      }
      input = {
        kind: "http",
        ...common,
        actions: action.name
          ? [
              {
                name: action.name,
                description: action.description,
                method: action.method,
                path: action.path,
                access: action.access,
                inputSchema: schema.value,
              },
            ]
          : [],
      };
    }
    setBusy(true);
    setError(null);
    try {
      await toolsApi.create(orgId, input);
      void queryClient.invalidateQueries({ queryKey: toolSourcesKey(orgId) });
      setOpen(false);
      setName("");
      setUrl("");
      setDescription("");
      setPrice("");
      setHeader("");
      setSecret("");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        setError(null);
      }}
    >
      <DialogTrigger asChild>
        <Button variant="primary">
          <Plus aria-hidden="true" />
          Add tool source
        </Button>
      </DialogTrigger>
      <DialogContent
        title="Add a tool source"
        description="Connect your product so the assistant can act in it for the person who chats. Every call carries a token Parley signs naming that person."
      >
        <form
          className="grid gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <fieldset className="grid gap-2">
            <legend className="mb-1 font-medium text-sm">Kind</legend>
            <div className="flex flex-wrap gap-4 text-sm">
              {(
                [
                  ["mcp", "MCP server"],
                  ["http", "HTTP action"],
                ] as const
              ).map(([value, label]) => (
                <label key={value} className="flex items-center gap-2">
                  <input
                    type="radio"
                    name="source-kind"
                    value={value}
                    checked={kind === value}
                    onChange={() => setKind(value)}
                    className="size-4 accent-primary"
                  />
                  {label}
                </label>
              ))}
            </div>
          </fieldset>
          <Field label="Name">
            <Input
              required
              maxLength={100}
              value={name}
              placeholder="Shop orders"
              onChange={(event) => setName(event.target.value)}
            />
          </Field>
          <Field
            label={kind === "mcp" ? "MCP server URL" : "Base URL"}
            hint={
              kind === "mcp"
                ? "Its streamable HTTP endpoint, https on a public host."
                : "Every action is called on this origin, https on a public host."
            }
          >
            <Input
              required
              type="url"
              maxLength={500}
              value={url}
              placeholder={
                kind === "mcp" ? "https://shop.example.com/mcp" : "https://api.example.com"
              }
              onChange={(event) => setUrl(event.target.value)}
            />
          </Field>
          <Field label="Description (optional)">
            <Input
              maxLength={1000}
              value={description}
              onChange={(event) => setDescription(event.target.value)}
            />
          </Field>
          {kind === "http" ? (
            <fieldset className="grid gap-3 rounded-md border border-border p-3">
              <legend className="px-1 font-medium text-sm">First action (optional)</legend>
              <div className="grid gap-3 sm:grid-cols-2">
                <Field label="Tool name" hint="a-z, 0-9 and _, such as order_status">
                  <Input
                    value={action.name}
                    pattern="[a-z][a-z0-9_]{0,63}"
                    onChange={(event) => setAction({ ...action, name: event.target.value })}
                  />
                </Field>
                <Field label="Reads or writes">
                  <Select
                    value={action.access}
                    onChange={(event) =>
                      setAction({ ...action, access: event.target.value as ToolAccess })
                    }
                  >
                    <option value="read">Reads (runs when the assistant calls it)</option>
                    <option value="write">Writes (the person approves each call)</option>
                  </Select>
                </Field>
                <Field label="Method">
                  <Select
                    value={action.method}
                    onChange={(event) =>
                      setAction({ ...action, method: event.target.value as HttpActionMethod })
                    }
                  >
                    {HTTP_ACTION_METHODS.map((method) => (
                      <option key={method} value={method}>
                        {method}
                      </option>
                    ))}
                  </Select>
                </Field>
                <Field label="Path" hint="Such as /orders/{orderId}">
                  <Input
                    value={action.path}
                    onChange={(event) => setAction({ ...action, path: event.target.value })}
                  />
                </Field>
              </div>
              <Field label="What it does (the assistant reads this)">
                <Input
                  value={action.description}
                  onChange={(event) => setAction({ ...action, description: event.target.value })}
                />
              </Field>
              <Field label="Arguments (JSON schema)">
                <Textarea
                  className="font-mono text-xs"
                  rows={5}
                  value={action.schema}
                  onChange={(event) => setAction({ ...action, schema: event.target.value })}
                />
              </Field>
            </fieldset>
          ) : null}
          <div className="grid gap-3 sm:grid-cols-2">
            <Field label="Price per call in USD (optional)" hint="Charged to the org's credits.">
              <Input
                inputMode="decimal"
                value={price}
                placeholder="0"
                onChange={(event) => setPrice(event.target.value)}
              />
            </Field>
            <Field label="Credential header (optional)" hint="Such as X-Api-Key">
              <Input value={header} onChange={(event) => setHeader(event.target.value)} />
            </Field>
          </div>
          {header.trim() !== "" ? (
            <Field label="Credential value" hint="Stored sealed; never shown again.">
              <Input
                type="password"
                autoComplete="off"
                required
                value={secret}
                onChange={(event) => setSecret(event.target.value)}
              />
            </Field>
          ) : null}
          <ErrorNote error={error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={busy}>
              {busy ? "Adding…" : "Add source"}
            </Button>
          </div>
        </form>
      </DialogContent>
    </Dialog>
  );
}
