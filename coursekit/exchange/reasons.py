"""Korean reasons for what the exchange left out or refused (learners and TAs read them)."""

from __future__ import annotations

import pwd

LINK = "링크라서 복사하지 않았습니다. 제출물에는 링크가 아닌 실제 파일만 넣으세요."
SPECIAL = "일반 파일이 아니라서(FIFO·장치·소켓) 복사하지 않았습니다."
ODD_NAME = "이름에 쓸 수 없는 문자(UTF-8이 아닌 바이트나 제어 문자)가 있어 복사하지 않았습니다."
CHANGED = "복사하는 동안 다른 것으로 바뀌어 복사하지 않았습니다."
NOT_A_FOLDER = "제출물이 폴더가 아니라서(링크나 파일) 받지 않았습니다."
BAD_FOLDER_NAME = (
    "제출 폴더 이름이 nbgrader 형식(<학습자>+<과제>+<시각>[+<임의 문자열>])이 아니라서 "
    "받지 않았습니다."
)
BAD_LEARNER_ID = "학습자 이름에 쓸 수 없는 문자가 있어 받지 않았습니다."


def account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def other_owner(uid: int, owner_uid: int) -> str:
    return (
        f"제출 폴더를 만든 계정({account(owner_uid)})이 아닌 계정({account(uid)})의 것이라 "
        "복사하지 않았습니다."
    )


def planted(owner: str, learner: str, claimed: str) -> str:
    return (
        f"계정 {owner}(학습자 {learner})이(가) 다른 학습자 {claimed}의 이름으로 넣은 제출물이라 "
        "받지 않았습니다. 제출물은 제출한 계정의 학습자에게만 기록됩니다."
    )


def too_big(size: int, limit: int) -> str:
    return f"파일이 너무 큽니다({size} 바이트). 파일 하나의 한도는 {limit} 바이트입니다."


def over_total(limit: int | None) -> str:
    return f"제출물 전체의 한도({limit} 바이트)를 넘어 복사하지 않았습니다."


def too_many_files(limit: int) -> str:
    return f"파일이 너무 많습니다. 제출물 하나에 파일은 {limit}개까지만 복사합니다(노트북 먼저)."


def too_many_entries(limit: int) -> str:
    return f"항목이 너무 많아 {limit}번째 뒤로는 보지 않았습니다."


def too_deep(limit: int) -> str:
    return f"폴더가 너무 깊습니다. 제출 폴더 아래 {limit}단계까지만 복사합니다."


def unreadable(error: OSError) -> str:
    return f"읽을 수 없어 복사하지 않았습니다({error.strerror or error})."


def renamed(kept: str) -> str:
    return (
        f"브라우저가 페이지로 열거나 형식을 알 수 없는 이름이라 {kept} (으)로 바꿔 두었습니다 "
        "(내용은 그대로입니다). 노트북이 이 파일을 원래 이름으로 읽는다면 찾지 못합니다."
    )


def name_taken(kept: str) -> str:
    return (
        f"브라우저가 페이지로 열거나 형식을 알 수 없는 이름이라 {kept} (으)로 바꿔야 하는데 "
        "그 이름의 파일이 이미 있어 복사하지 않았습니다."
    )


def set_aside(where: str) -> str:
    return f"한도 밖이거나 이름을 바꾼 원래 파일은 {where} 에 옮겨 두었습니다(채점하지 않습니다)."


def feedback_not_released(why: str) -> str:
    return f"피드백을 내보내지 못했습니다: {why}"
