import type { Attributes } from "../engine/attributes";
import { appPath } from "../http/base-path";

/** A run's attributes, each a link to the inbox's runs with that attribute (`attr.<name>=<value>`); text escaped as all text is. */
export function AttributeList(props: { attributes: Attributes }) {
  const entries = Object.entries(props.attributes);
  if (!entries.length) return <>—</>;
  return (
    <span class="attributes">
      {entries.map(([name, value], i) => (
        <>
          {i ? " " : ""}
          <a href={appPath(`/inbox?${new URLSearchParams({ [`attr.${name}`]: value })}`)}>
            <code>
              {name}={value}
            </code>
          </a>
        </>
      ))}
    </span>
  );
}
