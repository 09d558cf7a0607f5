/** Injection token of the app's validated `ManagementConfig`. */
export const MANAGEMENT_CONFIG = Symbol('MANAGEMENT_CONFIG');
