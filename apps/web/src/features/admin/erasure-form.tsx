import type { FormerMember, Member, Project, Role, Session } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Eraser } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../../components/load-more.tsx";
import {
  FieldMessage,
  fieldProps,
  ProblemField,
  RefusalNote,
  useRefusal,
} from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Field, Input, Select, Textarea } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { dataRightsApi } from "../../lib/data-rights-api.ts";
import {
  useAllFormerMembers,
  useAllMembers,
  useAllProjects,
  useAllSessions,
} from "../../lib/org-lists.ts";
import { keys } from "../../lib/query.ts";
import { type Problem, problemsOf, refusalOfProblems } from "../../lib/refusal.ts";
import { memberName } from "../members/member-rules.ts";
import { useErasureLabels } from "./erasure-labels.ts";
import { SUBJECT_TYPES, type SubjectType } from "./erasure-words.ts";

/** The server's legal basis for every request (apps/worker/src/erasure/file.ts `LEGAL_BASIS`). */
export const LEGAL_BASIS = "GDPR Art. 17 (right to erasure)";

const REASON_MAX = 500;

/** One thing that can be erased, as the picker lists it and the confirmation names it. */
export interface Target {
  id: string;
  /** The name the confirmation asks to type (members, projects) and the request list shows. */
  name: string;
  /** The option's full text: the name and what tells two alike apart. */
  text: string;
  /** Someone who left the org (or was removed): listed apart, and named so. */
  former?: true;
}

const dayFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });

export const sessionTitle = (session: Pick<Session, "title" | "createdAt">): string =>
  session.title?.trim() || `Untitled session of ${dayFormat.format(new Date(session.createdAt))}`;

/** The targets of each type, as the picker offers them to `actor`. */
export function erasureTargets(
  type: SubjectType,
  actor: Role,
  lists: {
    members: Member[];
    projects: Project[];
    sessions: Session[];
    formerMembers?: FormerMember[];
  },
): Target[] {
  if (type === "member") {
    const label = (person: { name: string; email: string }) => {
      const name = memberName(person);
      return { name, text: name === person.email ? name : `${name} — ${person.email}` };
    };
    // Only an owner may erase an owner (erasure.ts): an admin is not offered one.
    const current = lists.members
      .filter((member) => actor === "owner" || member.role !== "owner")
      .map((member) => ({ id: member.userId, ...label(member) }));
    // People who left still have their chats and spend here under their name (issue 28).
    const former = (lists.formerMembers ?? []).map((person) => {
      const { name, text } = label(person);
      return { id: person.userId, name, text: `${text} (former member)`, former: true as const };
    });
    return [...current, ...former];
  }
  if (type === "project") {
    return lists.projects.map((project) => ({
      id: project.id,
      name: project.name,
      text: project.name,
    }));
  }
  const projectNames = new Map(lists.projects.map((project) => [project.id, project.name]));
  return lists.sessions.map((session) => {
    const title = sessionTitle(session);
    const project = projectNames.get(session.projectId);
    return {
      id: session.id,
      name: title,
      text: `${title} — ${session.ownerLabel}${project ? ` · ${project}` : ""}`,
    };
  });
}

const nouns: Record<SubjectType, { one: string; many: string }> = {
  member: { one: "member", many: "members" },
  project: { one: "project", many: "projects" },
  session: { one: "session", many: "sessions" },
};

const hints: Record<SubjectType, string> = {
  member:
    "Their membership, their sessions and chat transcripts, and what they wrote in shared chats. What they were charged stays in the ledger under a pseudonym. People who left are listed as former members.",
  project:
    "The project, its memory, its onboarding chat and every session in it with their transcripts.",
  session: "One session and its transcript. Its charges stay in the ledger under a pseudonym.",
};

function confirmation(type: SubjectType, target: Target, orgName: string) {
  if (type === "member") {
    return {
      title: `Erase ${target.name}?`,
      description: `This erases ${target.name}${target.former ? ", a former member," : ""} from every store of ${orgName}: ${target.former ? "" : "their membership, "}their sessions and chat transcripts, and what they wrote in shared chats. The billing ledger and audit log keep what happened under a pseudonym. This cannot be undone.`,
      confirmLabel: "Erase member",
      typeToConfirm: target.name,
    };
  }
  if (type === "project") {
    return {
      title: `Erase the project ${target.name}?`,
      description: `This erases ${target.name} from every store: its memory, its onboarding chat and every session in it with their transcripts. Its charges stay in the billing ledger under a pseudonym. This cannot be undone.`,
      confirmLabel: "Erase project",
      typeToConfirm: target.name,
    };
  }
  return {
    title: "Erase this session?",
    description: `This erases ${target.text} and its transcript from every store. Its charges stay in the billing ledger under a pseudonym. This cannot be undone.`,
    confirmLabel: "Erase session",
  };
}

/**
 * Files an erasure request (GDPR Art. 17) for a member, project or session picked from the org's
 * lists, after a confirmation that names it (typed, for members and projects). Owners and admins.
 */
export function ErasureForm({
  orgId,
  orgName,
  actorRole,
}: {
  orgId: string;
  orgName: string;
  actorRole: Role;
}) {
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const { remember } = useErasureLabels(orgId);
  const [type, setType] = useState<SubjectType>("member");
  const [targetId, setTargetId] = useState("");
  const [search, setSearch] = useState("");
  const [reason, setReason] = useState("");
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const ids = { hint: useId(), target: useId(), reason: useId(), type: useId() };
  // The API's names: `subject.id` is what the picker chooses, `subject.type` the radio buttons.
  const targetProblem =
    at("subject.id") ??
    problemsOf(refusal).find((problem) => problem.field === "subject")?.message ??
    null;

  const members = useAllMembers(orgId, type === "member");
  const formerMembers = useAllFormerMembers(orgId, type === "member");
  const projects = useAllProjects(orgId, type !== "member");
  const sessions = useAllSessions(orgId, type === "session");
  const current = type === "member" ? members : type === "project" ? projects : sessions;
  const loading =
    current.query.isPending ||
    (type === "session" && projects.query.isPending) ||
    (type === "member" && formerMembers.query.isPending);
  const loadError = current.firstPageError;

  const targets = erasureTargets(type, actorRole, {
    members: members.items,
    projects: projects.items,
    sessions: sessions.items,
    formerMembers: formerMembers.items,
  });
  const needle = search.trim().toLowerCase();
  // The chosen one stays listed whatever the search, so the select never shows another.
  const shown = needle
    ? targets.filter(
        (target) => target.id === targetId || target.text.toLowerCase().includes(needle),
      )
    : targets;
  const noun = nouns[type];

  function pickType(next: SubjectType) {
    setType(next);
    setTargetId("");
    setSearch("");
    clear();
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = targets.find((candidate) => candidate.id === targetId);
    const why = reason.trim();
    // Every problem at once: the one to choose, and a reason too long.
    const problems: Problem[] = [
      ...(target ? [] : [{ field: "subject.id", message: `Choose the ${noun.one} to erase` }]),
      ...(why.length > REASON_MAX
        ? [{ field: "reason", message: `The reason is at most ${REASON_MAX} characters` }]
        : []),
    ];
    const refused = refusalOfProblems(problems);
    if (refused || !target) {
      refuseWith(refused);
      return;
    }
    clear();
    if (!(await confirm({ ...confirmation(type, target, orgName), destructive: true }))) return;
    setBusy(true);
    try {
      const request = await dataRightsApi.fileErasure(orgId, {
        subject: { type, id: target.id },
        ...(why ? { reason: why } : {}),
      });
      remember(request.id, target.name);
      toast.success(`Erasure of ${target.name} filed. Its progress shows under Erasure requests.`);
      setTargetId("");
      setSearch("");
      setReason("");
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: keys.erasures(orgId) }),
        queryClient.invalidateQueries({ queryKey: keys.members(orgId) }),
        queryClient.invalidateQueries({ queryKey: keys.projects(orgId) }),
        queryClient.invalidateQueries({ queryKey: keys.orgSessions(orgId) }),
      ]);
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card className="h-fit min-w-0">
      <CardHeader
        id="erasure-form-title"
        title="File an erasure request"
        description="Erases the subject from every store, then scans that nothing is left. It cannot be undone."
      />
      <CardBody>
        <form
          ref={form}
          onSubmit={onSubmit}
          aria-labelledby="erasure-form-title"
          className="grid gap-4"
          noValidate
        >
          <fieldset className="grid gap-2 text-sm" {...fieldProps(ids.type, at("subject.type"))}>
            <legend className="mb-1.5 font-medium">Subject type</legend>
            <div className="flex flex-wrap gap-x-5 gap-y-2">
              {SUBJECT_TYPES.map((option) => (
                <label key={option.value} className="flex items-center gap-2">
                  <input
                    type="radio"
                    name="subject-type"
                    value={option.value}
                    checked={type === option.value}
                    onChange={() => pickType(option.value)}
                    className="accent-primary"
                  />
                  {option.label}
                </label>
              ))}
            </div>
            <FieldMessage id={ids.type} message={at("subject.type")} />
          </fieldset>
          <Field label={`Search ${noun.many}`}>
            <Input
              type="search"
              value={search}
              onChange={(event) => setSearch(event.target.value)}
              autoComplete="off"
              placeholder={type === "member" ? "Name or email" : "Name"}
            />
          </Field>
          <div className="grid gap-1.5 text-sm">
            <label htmlFor={ids.target} className="font-medium">
              What to erase
            </label>
            <Select
              id={ids.target}
              value={targetId}
              disabled={loading}
              onChange={(event) => {
                setTargetId(event.target.value);
                if (targetProblem) clear();
              }}
              {...fieldProps(ids.target, targetProblem, ids.hint)}
            >
              <option value="">
                {loading
                  ? `Loading ${noun.many}…`
                  : targets.length === 0
                    ? `No ${noun.many} to erase`
                    : shown.length === 0
                      ? `No ${noun.one} matches “${search.trim()}”`
                      : `Choose a ${noun.one}…`}
              </option>
              {shown
                .filter((target) => !target.former)
                .map((target) => (
                  <option key={target.id} value={target.id}>
                    {target.text}
                  </option>
                ))}
              {shown.some((target) => target.former) ? (
                <optgroup label="Former members">
                  {shown
                    .filter((target) => target.former)
                    .map((target) => (
                      <option key={target.id} value={target.id}>
                        {target.text}
                      </option>
                    ))}
                </optgroup>
              ) : null}
            </Select>
            <FieldMessage id={ids.target} message={targetProblem} />
            <span id={ids.hint} className="text-muted-foreground text-xs">
              {hints[type]}
              {type === "member" && actorRole !== "owner"
                ? " Only an owner can erase an owner."
                : ""}
            </span>
            <ErrorNote error={loadError} retry={() => void current.query.refetch()} />
            <LoadMore more={current.more} label={`More ${noun.many}`} />
          </div>
          <div className="grid gap-1.5 text-sm">
            <span className="font-medium">Legal basis</span>
            <span className="text-muted-foreground">{LEGAL_BASIS}</span>
          </div>
          <ProblemField label="Reason (optional)" id={ids.reason} message={at("reason")}>
            <Textarea
              value={reason}
              onChange={(event) => setReason(event.target.value)}
              rows={2}
              maxLength={REASON_MAX}
              placeholder="Asked by email on 1 December"
              {...fieldProps(ids.reason, at("reason"))}
            />
          </ProblemField>
          <RefusalNote refusal={refusal} fields={["subject", "reason"]} />
          <Button type="submit" variant="destructive" disabled={busy || loading}>
            <Eraser aria-hidden="true" />
            {busy ? "Filing…" : "File erasure request"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}
