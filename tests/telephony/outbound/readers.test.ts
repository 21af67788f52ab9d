// The deterministic readers behind calling out: who answered (greeting), what an IVR offers
// and asks (prompt), whether a prompt came back (similarity), and what a failed dial means
// (SIP status). Many phrasings each: the rules must hold for callers and IVRs not seen here.
import { describe, expect, it } from 'vitest';
import { readGreeting } from '../../../src/telephony/outbound/greeting.js';
import { readPrompt } from '../../../src/telephony/outbound/prompt.js';
import { promptSimilarity } from '../../../src/telephony/outbound/similarity.js';
import {
  dialFailureFromError,
  dialFailureFromSip,
} from '../../../src/telephony/outbound/sip-status.js';

describe('readGreeting', () => {
  it.each([
    'Hello?',
    'Hi.',
    'Yes?',
    'Yeah, hello?',
    'Speaking.',
    'Hi, this is Dana.',
    'Good morning, Riverside Clinic, Dana speaking.',
    "Hello, who's calling?",
    'Hello... hello? Is anyone there?',
    'Hey, what can I do for you?',
  ])('%j is a person', (text) => {
    expect(readGreeting(text).kind).toBe('human');
  });

  it.each([
    "Hi, you've reached Sam. Please leave a message after the tone.",
    'The person you are trying to reach is not available. At the tone, please record your message.',
    'Please leave your message after the beep.',
    'You have reached the voicemail box of 555 0123.',
    "Hi, this is Sam, I can't come to the phone right now.",
    "Hi, you've reached Sam's phone. I'll get back to you as soon as I can.",
    'Hello, you have reached Dana. I am not available right now.',
    'Sorry I missed your call, leave me a message.',
  ])('%j is a voicemail', (text) => {
    expect(readGreeting(text).kind).toBe('voicemail');
  });

  it.each([
    'The mailbox is full and cannot accept any messages at this time. Goodbye.',
    'The voicemail box you are trying to reach has not been set up yet.',
    'This mailbox is not accepting messages.',
    "The subscriber's mailbox is full.",
    'Sorry, the memory is full.',
  ])('%j is a mailbox that takes no message', (text) => {
    expect(readGreeting(text).kind).toBe('mailbox_full');
  });

  it.each([
    'Thank you for calling Maple Court. For reception, press 1.',
    'Press 1 for English.',
    'Please listen carefully as our menu options have changed.',
    "If you know your party's extension, dial it now.",
    'Please say billing, support, or sales.',
    'Please say or enter your account number.',
    "Hi, I'm Ava, the virtual assistant.",
  ])('%j is an IVR', (text) => {
    expect(readGreeting(text).kind).toBe('ivr');
  });

  it.each([
    ['Thank you for calling Riverside Clinic.', 'machine'],
    ["Hello, you've reached Riverside Clinic.", 'machine'],
    ['Riverside Clinic.', 'unknown'],
    ['', 'unknown'],
    [
      'Well I was just telling my neighbour about the fence and how the council never answers',
      'unknown',
    ],
  ])('%j is not decided (%s)', (text, kind) => {
    expect(readGreeting(text).kind).toBe(kind);
  });
});

describe('readPrompt', () => {
  it('reads a menu "for X, press N", skipping a repeat key that duplicates none', () => {
    expect(
      readPrompt(
        'Welcome to Taskline Bank. For your balance, press 1. For a lost or stolen card, press 2. For an agent, press 3. To hear these options again, press star.',
      ).options,
    ).toEqual([
      { key: '1', label: 'your balance' },
      { key: '2', label: 'a lost or stolen card' },
      { key: '3', label: 'an agent' },
      { key: '*', label: 'hear these options again' },
    ]);
  });

  it.each([
    [
      'Press 1 for sales, press 2 for support, or press 0 to speak to an operator.',
      [
        ['1', 'sales'],
        ['2', 'support'],
        ['0', 'speak to an operator'],
      ],
    ],
    ['Thank you for calling, for billing press 2.', [['2', 'billing']]],
    [
      'For questions about billing, payments, or refunds, press 2.',
      [['2', 'questions about billing, payments, or refunds']],
    ],
    ['To speak to a pharmacist, press nine.', [['9', 'speak to a pharmacist']]],
    ['Press 0 at any time to speak with a representative.', [['0', 'speak with a representative']]],
    ['Press the pound key to return to the main menu.', [['#', 'return to the main menu']]],
    ['If you are a new patient, press 3.', [['3', 'you are a new patient']]],
    ['For English press 1.', [['1', 'english']]],
  ])('%j', (text, expected) => {
    expect(readPrompt(text).options.map((o) => [o.key, o.label])).toEqual(expected);
  });

  it('reads a speech menu, and marks a spoken option', () => {
    expect(readPrompt('Please say billing, support, or agent.').options).toEqual([
      { label: 'billing', say: 'billing' },
      { label: 'support', say: 'support' },
      { label: 'agent', say: 'agent' },
    ]);
    expect(
      readPrompt("You can say things like 'pay a bill' or 'check my balance'.").options,
    ).toEqual([
      { label: 'pay a bill', say: 'pay a bill' },
      { label: 'check my balance', say: 'check my balance' },
    ]);
    // "say your …" is a question, not a menu.
    expect(readPrompt('Please say your date of birth.').options).toEqual([]);
  });

  it.each([
    ['Please enter your 4-digit PIN.', { what: '4-digit pin', via: 'keys', digits: 4 }],
    [
      'Please enter your eight digit account number followed by the pound key.',
      { what: 'eight digit account number', via: 'keys', digits: 8, finishKey: '#' },
    ],
    ['Please say your date of birth.', { what: 'date of birth', via: 'speech' }],
    ['Please say or enter your member ID.', { what: 'member id', via: 'either' }],
    [
      "If you know your party's extension, you may dial it at any time.",
      { what: "party's extension", via: 'keys' },
    ],
    [
      'Using your telephone keypad, enter your 10-digit phone number now.',
      { what: '10-digit phone number', via: 'keys', digits: 10 },
    ],
    [
      'Enter the last four digits of your social security number.',
      { what: 'last four digits of your social security number', via: 'keys' },
    ],
  ])('reads the request in %j', (text, request) => {
    expect(readPrompt(text).request).toEqual(request);
  });

  it('tells hold, a refused entry and a person apart from a menu', () => {
    expect(
      readPrompt('Please hold while we connect you to the next available agent.'),
    ).toMatchObject({ hold: true, human: false, options: [] });
    expect(
      readPrompt('All of our representatives are currently assisting other callers.').hold,
    ).toBe(true);
    expect(readPrompt('You are caller number three in the queue.').hold).toBe(true);
    expect(
      readPrompt("That PIN doesn't match our records. Please enter your 4-digit PIN."),
    ).toMatchObject({
      rejected: true,
      request: { what: '4-digit pin' },
    });
    expect(readPrompt('Sorry, that is not a valid option.').rejected).toBe(true);
    expect(readPrompt('Hello, this is Jordan speaking, how can I help?').human).toBe(true);
    expect(readPrompt('For billing, press 1. Hello?').human).toBe(false);
    expect(readPrompt('Your balance is $1,234.56. Thank you for calling. Goodbye.')).toEqual({
      options: [],
      hold: false,
      rejected: false,
      human: false,
    });
  });
});

describe('promptSimilarity', () => {
  const menu = 'Main menu. For billing, press 1. For support, press 2.';
  it('is 1 for the same prompt, high for a replay inside a longer one or a near re-read', () => {
    expect(promptSimilarity(menu, menu)).toBeCloseTo(1);
    expect(promptSimilarity(menu, `Sorry, that is not a valid option. ${menu}`)).toBeGreaterThan(
      0.8,
    );
    expect(
      promptSimilarity(menu, 'Main menu. For billing press one. For support, press 2.'),
    ).toBeGreaterThan(0.6);
  });
  it('is low for another menu of the same IVR and for short common words', () => {
    expect(
      promptSimilarity(menu, 'Billing. For payments, press 1. For refunds, press 2.'),
    ).toBeLessThan(0.8);
    expect(promptSimilarity('Goodbye.', `${menu} Goodbye.`)).toBeLessThan(0.8);
    expect(promptSimilarity('', menu)).toBe(0);
  });
});

describe('dial failures', () => {
  it.each([
    [486, 'busy', 'the line is busy (SIP 486 Busy Here)'],
    [600, 'busy', 'the line is busy (SIP 600 Busy Everywhere)'],
    [603, 'busy', 'the callee declined the call (SIP 603 Decline)'],
    [408, 'no_answer', 'nobody answered (SIP 408 Request Timeout)'],
    [480, 'no_answer', 'nobody answered (SIP 480 Temporarily Unavailable)'],
    [487, 'no_answer', 'nobody answered (SIP 487 Request Terminated)'],
    [404, 'failed', 'the call could not be connected (SIP 404 Not Found)'],
    [484, 'failed', 'the call could not be connected (SIP 484 Address Incomplete)'],
    [503, 'failed', 'the call could not be connected (SIP 503 Service Unavailable)'],
  ])('SIP %i is %s', (code, status, reason) => {
    expect(dialFailureFromSip(code)).toMatchObject({ status, sipStatusCode: code, reason });
  });

  it("reads livekit-server-sdk's Twirp error metadata; the SIP reason phrase given wins", () => {
    const error = Object.assign(new Error('SIP call failed: 486 Busy Here (failed_precondition)'), {
      code: 'failed_precondition',
      status: 424,
      metadata: { sip_status_code: '486', sip_status: 'Busy here, try later' },
    });
    expect(dialFailureFromError(error)).toEqual({
      status: 'busy',
      sipStatusCode: 486,
      sipStatus: 'Busy here, try later',
      reason: 'the line is busy (SIP 486 Busy here, try later)',
    });
  });

  it('a ringing timeout (Twirp canceled, no SIP status) is no answer; anything else failed', () => {
    const timeout = Object.assign(new Error('sip request timed out'), { code: 'canceled' });
    expect(dialFailureFromError(timeout)).toMatchObject({ status: 'no_answer' });
    const shuttingDown = Object.assign(new Error('service shutting down'), { code: 'canceled' });
    expect(dialFailureFromError(shuttingDown)).toEqual({
      status: 'failed',
      reason: 'service shutting down',
    });
    expect(dialFailureFromError(new TypeError('fetch failed'))).toEqual({
      status: 'failed',
      reason: 'fetch failed',
    });
    expect(dialFailureFromError({ metadata: { sip_status_code: 'abc' } })).toMatchObject({
      status: 'failed',
    });
  });
});
