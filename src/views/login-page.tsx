import { Page } from "./layout";
import { appPath } from "../http/base-path";

/** The sign-in form: the API token, once, for a session cookie. */
export function LoginPage(props: { csrf: string; next: string; error?: string }) {
  return (
    <Page title="Sign in to edgework">
      <h1>Sign in</h1>
      {props.error ? <p class="badge failed">{props.error}</p> : null}
      <form method="post" action={appPath("/login")}>
        <input type="hidden" name="csrf" value={props.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <p>
          <label>
            API token
            <br />
            <input type="password" name="token" autocomplete="current-password" required />
          </label>
        </p>
        <button type="submit" class="approve">
          Sign in
        </button>
      </form>
    </Page>
  );
}

/** Sign out: a form, so it carries the CSRF token. */
export function LogoutForm(props: { csrf: string }) {
  return (
    <form method="post" action={appPath("/logout")} class="inline">
      <input type="hidden" name="csrf" value={props.csrf} />
      <button type="submit" class="reject">
        Sign out
      </button>
    </form>
  );
}
