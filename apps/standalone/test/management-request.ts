/** An empty body reads as null. */
export async function managementRequest<T = Record<string, any>>(
  baseUrl: string,
  key: string,
  method: string,
  requestPath: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${requestPath}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Fails, naming the flag, on the first not answered 201. */
export async function createFeatureFlags(
  managementUrl: string,
  credentials: { personal_api_key: string; project_id: number },
  flags: Record<string, unknown>[],
): Promise<void> {
  for (const flag of flags) {
    const response = await managementRequest(
      managementUrl,
      credentials.personal_api_key,
      'POST',
      `/api/projects/${credentials.project_id}/feature_flags/`,
      flag,
    );
    expect({ key: flag.key, status: response.status }).toEqual({ key: flag.key, status: 201 });
  }
}

/** For set-up steps: an answer of 300 or more fails the test with the request and its answer. */
export function managementApi(baseUrl: string, key: string) {
  return async <T = Record<string, any>>(method: string, requestPath: string, body?: unknown): Promise<T> => {
    const response = await managementRequest<T>(baseUrl, key, method, requestPath, body);
    if (response.status >= 300) {
      throw new Error(
        `${method} ${requestPath} answered ${response.status}: ${JSON.stringify(response.body)}`,
      );
    }
    return response.body;
  };
}
