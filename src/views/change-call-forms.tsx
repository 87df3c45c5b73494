import type { ApprovalView } from "../runs/types";
import { MAX_RESPONSE_CHARS } from "../engine/approvals/edit";
import { argumentFields, fieldName, type ArgumentField } from "./argument-fields";

const rows = (text: string) => Math.min(12, Math.max(2, text.split("\n").length));
/** A text box's content as written: HTML drops one line break right after `<textarea>`, so one that starts with a line break gets another. */
const boxed = (text: string) => (text.startsWith("\n") || text.startsWith("\r") ? `\n${text}` : text);

/** One argument's input: its kind's control, named by `fieldName`, filled with the asked value. */
function Field(props: { field: ArgumentField; id: string }) {
  const { field: f, id } = props;
  const name = fieldName(f.name);
  const control = (() => {
    switch (f.kind) {
      case "string":
        return f.multiline ? (
          <textarea id={id} name={name} rows={rows(f.value)}>
            {boxed(f.value)}
          </textarea>
        ) : (
          <input id={id} type="text" name={name} value={f.value} size={60} />
        );
      case "number":
        return <input id={id} type="number" name={name} value={f.value} step={f.integer ? "1" : "any"} />;
      case "boolean":
        return (
          <select id={id} name={name}>
            <option value="" selected={f.value === ""}>
              {f.required ? "(choose)" : "(leave out)"}
            </option>
            <option value="true" selected={f.value === "true"}>
              true
            </option>
            <option value="false" selected={f.value === "false"}>
              false
            </option>
          </select>
        );
      case "enum":
        return (
          <select id={id} name={name}>
            <option value="" selected={f.value === ""}>
              {f.required ? "(choose)" : "(leave out)"}
            </option>
            {f.options.map((o) => (
              <option value={o.value} selected={o.value === f.value}>
                {o.label}
              </option>
            ))}
          </select>
        );
      case "json":
        return (
          <textarea id={id} name={name} rows={rows(f.value)}>
            {boxed(f.value)}
          </textarea>
        );
    }
  })();
  return (
    <p>
      <label for={id}>
        <code>{f.name}</code>
        {f.required ? " (required)" : ""}
        {f.kind === "json" ? " — JSON" : ""}
      </label>
      {f.description ? <span class="hint"> — {f.description}</span> : null}
      <br />
      {control}
    </p>
  );
}

/**
 * Edit, then approve: a form of the tool's input schema (raw JSON for what it cannot
 * show), and the whole arguments as raw JSON beside it; each posts to the approval's
 * own link. Opened at once by `?intent=edit`.
 */
export function EditForm(props: { approval: ApprovalView; action: string; open: boolean }) {
  const a = props.approval;
  const fields = argumentFields(a.input_schema, a.args);
  return (
    <details id="edit" open={props.open}>
      <summary>Edit the arguments, then approve</summary>
      <p>The call runs with what you send here instead; it is checked against the tool's input schema, and the run records the original beside it.</p>
      {fields ? (
        <form method="post" action={props.action}>
          {fields.map((f, i) => (
            <Field field={f} id={`arg-${i}`} />
          ))}
          <NoteField />
          <button type="submit" name="decision" value="edit" class="approve">
            Approve with these arguments
          </button>
        </form>
      ) : null}
      <form method="post" action={props.action}>
        <p>
          <label>
            {fields ? "Or all the arguments as JSON" : "The arguments as JSON"}
            <br />
            <textarea name="arguments_json" rows={10}>
              {JSON.stringify(a.args, null, 2)}
            </textarea>
          </label>
        </p>
        <NoteField />
        <button type="submit" name="decision" value="edit_json" class="approve">
          Approve with this JSON
        </button>
      </form>
    </details>
  );
}

/** Answer in place of the call: the text is the call's result, the tool never runs. */
export function RespondForm(props: { action: string; open: boolean }) {
  return (
    <details id="respond" open={props.open}>
      <summary>Answer in place of the call</summary>
      <form method="post" action={props.action}>
        <p>
          <label>
            The call's result, as the model will read it (the tool does not run; the model is told a person answered)
            <br />
            <textarea name="result" maxlength={MAX_RESPONSE_CHARS} required></textarea>
          </label>
        </p>
        <button type="submit" name="decision" value="respond" class="approve">
          Send this answer instead
        </button>
      </form>
    </details>
  );
}

/** The decision forms' note to the model (the approval page's and these). */
export const NoteField = () => (
  <p>
    <label>
      Note (optional, the model sees it)
      <br />
      <textarea name="note" maxlength={2000}></textarea>
    </label>
  </p>
);
